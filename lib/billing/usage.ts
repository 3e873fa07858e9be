import { findTier, type TierDefinition, tierOf } from '#lib/billing/catalogue';
import type { Tier } from '#lib/config';
import { tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { NotFoundError } from '#lib/errors';
import { getOrganizationItem, type OrganizationItem } from '#lib/identity/organizations';
import { tokensConsumed } from '#lib/tokens/ledger';

/**
 * An organization's usage against its tier's limits. Agents and pipelines are counted from their
 * records under the tenant (`AGENT#`, `PIPELINE#`; none exist yet, so they count 0 until those
 * features land), members from the organization's `member_count`, and tokens from this calendar
 * month's (UTC) ledger entries of type `consume`.
 */
export interface Usage {
  agents: number;
  pipelines: number;
  members: number;
  tokens_consumed: number;
}

export interface Violation {
  resource: 'agents' | 'pipelines' | 'members';
  used: number;
  limit: number;
}

export interface Period {
  start: string;
  end: string;
}

export function monthOf(now: Date): Period {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start: start.toISOString(), end: end.toISOString() };
}

export async function requireOrganization(orgId: string): Promise<OrganizationItem> {
  const org = await getOrganizationItem(orgId);
  if (!org) throw new NotFoundError('Organization not found');
  return org;
}

async function countPrefix(orgId: string, prefix: string): Promise<number> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix },
      Select: 'COUNT',
      ExclusiveStartKey: startKey,
    });
    count += result.Count ?? 0;
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return count;
}

export async function usageOf(org: OrganizationItem, now: Date): Promise<Usage> {
  const [agents, pipelines, tokens] = await Promise.all([
    countPrefix(org.id, 'AGENT#'),
    countPrefix(org.id, 'PIPELINE#'),
    tokensConsumed(org.id, monthOf(now)),
  ]);
  return { agents, pipelines, members: org.member_count ?? 1, tokens_consumed: tokens };
}

/** What exceeds a tier's limits (unlimited limits never do). */
export function violationsFor(usage: Usage, tier: TierDefinition): Violation[] {
  const resources = ['agents', 'pipelines', 'members'] as const;
  return resources.flatMap((resource) => {
    const limit = tier.limits[resource];
    return limit !== null && usage[resource] > limit ? [{ resource, used: usage[resource], limit }] : [];
  });
}

export const tierRank = (tier: Tier): number => ['free', 'pro', 'teams', 'enterprise'].indexOf(tier);

export const tierDefinition = (tier: string): TierDefinition | undefined => findTier(tier);

export const currentTier = (org: OrganizationItem): TierDefinition => tierOf(org.tier);
