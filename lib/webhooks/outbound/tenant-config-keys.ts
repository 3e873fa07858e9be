import { type TableKey, tenantPk } from '#lib/db/keys';
import { WEBHOOK_EVENTS, type WebhookEvent } from '#lib/webhooks/outbound/event-types';

/**
 * Where the tenant's configuration lives (access patterns: lib/webhooks/outbound/tenant-config-records.ts):
 * the outbound webhook URLs and the deploy pipeline, on one item per organization. The signing secret
 * lives in the organization's credential store (`webhook.signing.secret`), sealed like every other
 * credential and never written anywhere else.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | tenant configuration | `T#<org>` | `TENANTCONFIG` | `hook_<event>` per registered URL; `deploy_pipeline_id` |
 */
export const tenantConfigKeys = {
  byOrg: (orgId: string): TableKey => ({ pk: tenantPk(orgId), sk: 'TENANTCONFIG' }),
  /** Each URL is its own attribute, so that two PATCHes of different events never undo each other. */
  hookAttribute: (event: WebhookEvent): `hook_${WebhookEvent}` => `hook_${event}`,
};

export const SIGNING_SECRET_KEY = 'webhook.signing.secret';

export interface TenantConfigItem extends TableKey {
  created_at?: string;
  updated_at?: string;
  updated_by?: string;
  secret_rotated_at?: string;
  /** Epoch ms until which one caller is creating the first signing secret. */
  secret_claim_until?: number;
  /** The pipeline a push to the default branch runs (lib/deployments/deploy-pipeline.ts); absent when none. */
  deploy_pipeline_id?: number;
  [hook: `hook_${string}`]: string | undefined;
}

export type WebhookTargets = Record<WebhookEvent, string | null>;

export interface TenantConfig {
  webhooks: WebhookTargets;
  /** Only organization admins and owners see it; null for everyone else. */
  signing_secret: string | null;
  deploy_pipeline_id: number | null;
  /** Null until the configuration is first changed. */
  updated_at: string | null;
}

export const targetsOf = (item: TenantConfigItem | undefined): WebhookTargets =>
  Object.fromEntries(
    WEBHOOK_EVENTS.map((event) => [event, item?.[tenantConfigKeys.hookAttribute(event)] ?? null]),
  ) as WebhookTargets;

export const toTenantConfig = (item: TenantConfigItem | undefined, secret: string | null): TenantConfig => ({
  webhooks: targetsOf(item),
  signing_secret: secret,
  deploy_pipeline_id: item?.deploy_pipeline_id ?? null,
  updated_at: item?.updated_at ?? null,
});

/** Nobody holds the right to create the first secret, or their claim has run out (`:nowMs`). */
export const secretUnclaimed = 'attribute_not_exists(secret_claim_until) OR secret_claim_until < :nowMs';
