import { table } from '#lib/db/table';
import { isConditionFailed } from '#lib/errors';
import type { WebhookEvent } from '#lib/webhooks/outbound/event-types';
import {
  secretUnclaimed,
  type TenantConfigItem,
  targetsOf,
  tenantConfigKeys,
  type WebhookTargets,
} from '#lib/webhooks/outbound/tenant-config-keys';

/** The access patterns of the tenant configuration (keys and types: tenant-config-keys.ts). */

export async function getTenantConfigItem(orgId: string): Promise<TenantConfigItem | undefined> {
  const result = await table.get({ Key: tenantConfigKeys.byOrg(orgId), ConsistentRead: true });
  return result.Item as TenantConfigItem | undefined;
}

/**
 * The registered URL of every event (null where none is), for publishing. Here, beside the item it
 * reads, so that a function that publishes events does not import the configuration's endpoints and what
 * they reach (the credential store, the deploy pipeline's checks).
 */
export async function readWebhookTargets(orgId: string): Promise<WebhookTargets> {
  return targetsOf(await getTenantConfigItem(orgId));
}

/**
 * Takes the right to create the organization's first signing secret until `until` (epoch ms); false
 * while another caller holds an unexpired claim.
 */
export async function claimSecretCreation(input: { orgId: string; now: Date; until: number }): Promise<boolean> {
  try {
    await table.update({
      Key: tenantConfigKeys.byOrg(input.orgId),
      UpdateExpression: 'SET secret_claim_until = :until, created_at = if_not_exists(created_at, :at)',
      ConditionExpression: secretUnclaimed,
      ExpressionAttributeValues: {
        ':until': input.until,
        ':nowMs': input.now.getTime(),
        ':at': input.now.toISOString(),
      },
      reason: 'claimed',
    });
    return true;
  } catch (error) {
    if (isConditionFailed(error, 'claimed')) return false;
    throw error;
  }
}

/**
 * Sets (URL) or removes (null) the URL of each event given, and sets (id) or removes (null) the deploy
 * pipeline when `deployPipelineId` is given, in one UpdateItem, and notes who changed the configuration.
 * Answers the configuration as it is afterwards.
 */
export async function updateTenantConfigItem(input: {
  orgId: string;
  changes: Array<[WebhookEvent, string | null]>;
  deployPipelineId?: number | null | undefined;
  actor: string;
  at: string;
}): Promise<TenantConfigItem> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':at': input.at, ':actor': input.actor };
  const sets = ['updated_at = :at', 'updated_by = :actor', 'created_at = if_not_exists(created_at, :at)'];
  const removes: string[] = [];
  const change = (attribute: string, placeholder: string, value: unknown) => {
    names[`#${placeholder}`] = attribute;
    if (value === null) {
      removes.push(`#${placeholder}`);
    } else {
      values[`:${placeholder}`] = value;
      sets.push(`#${placeholder} = :${placeholder}`);
    }
  };
  for (const [index, [event, url]] of input.changes.entries()) {
    change(tenantConfigKeys.hookAttribute(event), `hook${index}`, url);
  }
  if (input.deployPipelineId !== undefined) change('deploy_pipeline_id', 'deployPipeline', input.deployPipelineId);
  const result = await table.update({
    Key: tenantConfigKeys.byOrg(input.orgId),
    UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
  });
  return result.Attributes as TenantConfigItem;
}

/** Notes a rotation of the signing secret; answers the configuration as it is afterwards. */
export async function markSecretRotated(input: {
  orgId: string;
  actor: string;
  at: string;
}): Promise<TenantConfigItem> {
  const result = await table.update({
    Key: tenantConfigKeys.byOrg(input.orgId),
    UpdateExpression: [
      'SET updated_at = :at, updated_by = :actor, secret_rotated_at = :at',
      'created_at = if_not_exists(created_at, :at)',
    ].join(', '),
    ExpressionAttributeValues: { ':at': input.at, ':actor': input.actor },
    ReturnValues: 'ALL_NEW',
  });
  return result.Attributes as TenantConfigItem;
}
