import { type TableKey, tenantPk } from '#lib/db/keys';
import { WEBHOOK_EVENTS, type WebhookEvent } from '#lib/webhooks/outbound/event-types';

/**
 * Where the tenant's outbound-webhook configuration lives (access patterns:
 * lib/webhooks/outbound/tenant-config-records.ts). The URLs live on one item per organization; the
 * signing secret lives in the organization's credential store (`webhook.signing.secret`), sealed like
 * every other credential and never written anywhere else.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | tenant configuration | `T#<org>` | `TENANTCONFIG` | `hook_<event>` attributes, one per registered URL |
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
  [hook: `hook_${string}`]: string | undefined;
}

export type WebhookTargets = Record<WebhookEvent, string | null>;

export interface TenantConfig {
  webhooks: WebhookTargets;
  /** Only organization admins and owners see it; null for everyone else. */
  signing_secret: string | null;
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
  updated_at: item?.updated_at ?? null,
});

/** Nobody holds the right to create the first secret, or their claim has run out (`:nowMs`). */
export const secretUnclaimed = 'attribute_not_exists(secret_claim_until) OR secret_claim_until < :nowMs';
