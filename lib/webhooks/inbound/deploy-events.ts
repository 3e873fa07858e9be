import { randomBase62 } from '#lib/crypto/secrets';
import { itemIsNew } from '#lib/db/conditions';
import type { TransactItem } from '#lib/db/transactions';
import { deploymentOutcomeWrite } from '#lib/deployments/deployments';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import {
  DeployEventEnvelope,
  type DeploymentEvent,
  DeploymentEventPayload,
  parsePayload,
} from '#lib/webhooks/inbound/payloads';
import { receipt, recordDeliveryOnce, type WebhookAction, type WebhookReceipt } from '#lib/webhooks/inbound/receipts';
import { emailOwnersAndAdmins } from '#lib/webhooks/inbound/team-notifications';
import { type InboundRequest, verifyInboundWebhook } from '#lib/webhooks/inbound/verification';
import { webhookKeys } from '#lib/webhooks/inbound/webhook-keys';

/**
 * POST /webhooks/deploy: deployment events of the hosting provider. `deployment.completed` marks the
 * deployment succeeded; `deployment.failed` marks it failed, opens an alert and emails the
 * organization's owners and admins. Other event types are acknowledged and ignored.
 */

export const HANDLED_DEPLOY_EVENTS = ['deployment.completed', 'deployment.failed'] as const;

/** Alert texts quote the provider's error message, cut to what an email subject line and body can hold. */
const MAX_ERROR_MESSAGE = 1000;

export async function receiveDeployWebhook(
  ctx: RequestContext,
  request: InboundRequest & { body: unknown },
): Promise<WebhookReceipt> {
  const now = ctx.ports.clock.now();
  const { orgId } = await verifyInboundWebhook(ctx, 'deploy', request);
  const { type } = parsePayload(DeployEventEnvelope, request.body);
  if (!(HANDLED_DEPLOY_EVENTS as readonly string[]).includes(type)) {
    return receipt(type, [
      { type: 'ignored', detail: `${type} is not handled; only ${HANDLED_DEPLOY_EVENTS.join(' and ')} are` },
    ]);
  }
  const event = parsePayload(DeploymentEventPayload, request.body);
  const failed = event.type === 'deployment.failed';
  const errorMessage = failed
    ? (event.error?.message ?? 'The hosting provider reported a failure without a message').slice(0, MAX_ERROR_MESSAGE)
    : undefined;
  const writes: TransactItem[] = [
    deploymentOutcomeWrite(
      orgId,
      {
        id: event.deployment_id,
        status: failed ? 'failed' : 'succeeded',
        project: event.project ?? undefined,
        environment: event.environment ?? undefined,
        commitSha: event.commit_sha ?? undefined,
        url: event.url ?? undefined,
        errorMessage,
      },
      now,
    ),
  ];
  const actions: WebhookAction[] = [
    { type: 'deployment.updated', id: event.deployment_id, status: failed ? 'failed' : 'succeeded' },
  ];
  if (failed) {
    const alertId = `alt_${randomBase62(16)}`;
    writes.push(alertWrite(orgId, alertId, event, errorMessage as string, now));
    actions.push({ type: 'alert.created', id: alertId, status: 'open' });
  }

  const outcome = await recordDeliveryOnce({
    source: 'deploy',
    orgId,
    eventId: event.id,
    event: event.type,
    payload: request.body,
    now,
    writes,
  });
  if (outcome === 'recorded' && failed) {
    // After the commit: an email cannot be rolled back, so it goes out only for a recorded failure.
    const sent = await emailOwnersAndAdmins(ctx, orgId, failureEmail(ctx, event, errorMessage as string));
    actions.push({ type: 'team.notified', detail: `${sent} owner(s) and admin(s) emailed` });
  }
  logger.info('inbound webhook accepted', {
    source: 'deploy',
    event: event.type,
    org_id: orgId,
    event_id: event.id,
    outcome,
    actions: actions.map((action) => action.type),
  });
  return receipt(event.type, actions, outcome === 'duplicate');
}

function alertWrite(
  orgId: string,
  alertId: string,
  event: DeploymentEvent,
  errorMessage: string,
  now: Date,
): TransactItem {
  const at = now.toISOString();
  return {
    Put: {
      Item: {
        ...webhookKeys.alert(orgId, at, alertId),
        id: alertId,
        type: 'deployment.failed',
        severity: 'error',
        status: 'open',
        title: `Deployment ${event.deployment_id} failed`,
        message: errorMessage,
        deployment_id: event.deployment_id,
        project: event.project ?? null,
        environment: event.environment ?? null,
        created_at: at,
        updated_at: at,
      },
      ConditionExpression: itemIsNew,
    },
  };
}

function failureEmail(ctx: RequestContext, event: DeploymentEvent, errorMessage: string) {
  const where = [event.project, event.environment].filter(Boolean).join(' / ');
  return {
    subject: `Deployment failed${where ? `: ${where}` : ''}`,
    text: [
      `The hosting provider reports that deployment ${event.deployment_id} failed.`,
      '',
      ...(where ? [`Project / environment: ${where}`] : []),
      ...(event.commit_sha ? [`Commit: ${event.commit_sha}`] : []),
      `Error: ${errorMessage}`,
      '',
      `Deployments: ${ctx.baseUrl}/deployments`,
    ].join('\n'),
  };
}
