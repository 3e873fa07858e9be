import type { ActivityRecord, ActorType } from '#lib/activity/activity-keys';
import { activityActor, recordActivity } from '#lib/activity/activity-log';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { redact } from '#lib/webhooks/inbound/redaction';

/**
 * POST /activity-log: an entry a client records (a deployment script, an agent outside the service).
 * The body names the actor; the entry also keeps who sent it (`recorded_by`), so a client cannot pass
 * its entry off as the service's own. The metadata is stored redacted as inbound webhook payloads are
 * (values of keys such as `token`, `secret`, `password`, and email addresses, become `[REDACTED]`): the
 * log is read by every member and must never become a copy of someone's credentials.
 */
export interface NewActivity {
  actor_type: ActorType;
  actor_id: string;
  action: string;
  entity_type?: string;
  entity_id?: string;
  metadata?: Record<string, unknown>;
}

export async function postActivity(ctx: RequestContext, input: NewActivity): Promise<ActivityRecord> {
  const principal = requirePrincipal(ctx);
  // A plain copy: redaction builds prototype-less objects, which the document client does not take.
  const metadata = JSON.parse(JSON.stringify(redact(input.metadata ?? {}))) as Record<string, unknown>;
  return recordActivity(
    principal.orgId,
    {
      actor_type: input.actor_type,
      actor_id: input.actor_id,
      action: input.action,
      ...(input.entity_type !== undefined ? { entity_type: input.entity_type } : {}),
      ...(input.entity_id !== undefined ? { entity_id: input.entity_id } : {}),
      metadata,
    },
    ctx.ports.clock.now(),
    activityActor(principal).actor_id,
  );
}
