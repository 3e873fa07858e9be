import { tenantPk } from '#lib/db/keys';

/**
 * Where inbound-webhook records live in the table.
 *
 * | record | pk | sk | indexes |
 * |---|---|---|---|
 * | seen delivery / event id | `WEBHOOKSEEN#<source>#<org>#<id>` | `WEBHOOKSEEN` | TTL 7 days |
 * | accepted payload (redacted) | `T#<org>` | `WEBHOOKEVENT#<source>#<time>#<id>` | TTL 90 days |
 * | alert | `T#<org>` | `ALERT#<time>#<id>` | |
 * | support request | `T#<org>` | `SUPPORT#<id>` | |
 *
 * Deployments the webhooks record live in lib/deployments/deployment-keys.ts; jobs they queue (brand
 * assets) are written by lib/jobs/jobs.ts (`T#<org>#JOBS` / `JOB#<id>`, lib/jobs/job-keys.ts); the deploy
 * pipeline's executions a push starts, by lib/pipelines/execution-records.ts.
 */
export type WebhookSource = 'git' | 'deploy' | 'chat';

export const webhookKeys = {
  seen: (source: WebhookSource, orgId: string, id: string) => ({
    pk: `WEBHOOKSEEN#${source}#${orgId}#${id}`,
    sk: 'WEBHOOKSEEN',
  }),
  event: (orgId: string, source: WebhookSource, at: string, id: string) => ({
    pk: tenantPk(orgId),
    sk: `WEBHOOKEVENT#${source}#${at}#${id}`,
  }),
  alert: (orgId: string, at: string, alertId: string) => ({
    pk: tenantPk(orgId),
    sk: `ALERT#${at}#${alertId}`,
  }),
  supportRequest: (orgId: string, requestId: string) => ({ pk: tenantPk(orgId), sk: `SUPPORT#${requestId}` }),
};

/**
 * A provider retries a delivery for hours at most (GitHub stops after a few, hosting providers within a
 * day), so a week of remembered ids covers every honest retry; deploy and chat replays outside the
 * five-minute window fail on their timestamp anyway.
 */
export const SEEN_TTL_SECONDS = 7 * 24 * 60 * 60;

/** Stored payloads are an audit trail for troubleshooting, not a record of business: kept 90 days. */
export const EVENT_TTL_SECONDS = 90 * 24 * 60 * 60;

/**
 * Ids that end up in keys (delivery ids, event ids, deployment ids) must be short and plain, so that a
 * signed but odd id cannot forge a key prefix.
 */
export const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
