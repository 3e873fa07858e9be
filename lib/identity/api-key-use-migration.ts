import { itemExists } from '#lib/db/conditions';
import { prefixEnd, tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import { apiKeyKeys } from '#lib/identity/api-key-records';
import { sumOverOrganizations } from '#lib/identity/organizations';
import { epochSeconds } from '#lib/identity/ttl';

/**
 * The move of API key uses written before they had partitions of their own: they sat in the
 * organization's partition (`T#<org>` / `APIKEYUSE#<key>#<at>#<nonce>`), beside the records every
 * request reads and in the same partition's write throughput. Each is moved by one transaction that
 * writes it (same time, same nonce, same expiry) into its key's partition and deletes the old item on
 * condition that it is still there, so a second run, or two at once, move no use twice. A use past its
 * retention is only deleted.
 *
 * Run once per installation that has such uses: infra/migrations/api-key-uses.ts.
 */

export interface UseMoveResult {
  moved: number;
  expired: number;
}

/** Moves one organization's old uses; answers how many were moved and how many were past retention. */
export async function moveLegacyApiKeyUses(orgId: string, now: Date): Promise<UseMoveResult> {
  const result: UseMoveResult = { moved: 0, expired: 0 };
  const prefix = apiKeyKeys.legacyUsesPrefix;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :prefix AND :end',
      ExpressionAttributeValues: { ':pk': tenantPk(orgId), ':prefix': prefix, ':end': prefixEnd(prefix) },
      Limit: 100,
      ExclusiveStartKey: startKey,
    });
    for (const old of page.Items ?? []) {
      const key = { pk: String(old.pk), sk: String(old.sk) };
      const removal = { Delete: { Key: key, ConditionExpression: itemExists }, reason: 'moved' };
      // `APIKEYUSE#<key id>#<at>#<nonce>`: the key id has no `#`, the time neither.
      const [, keyId, at, nonce] = key.sk.split('#');
      try {
        if (!keyId || !at || !nonce || Number(old.expires_at ?? 0) <= epochSeconds(now)) {
          await transact([removal]);
          result.expired += 1;
          continue;
        }
        const { pk: _pk, sk: _sk, ...fields } = old;
        await transact([{ Put: { Item: { ...apiKeyKeys.use(orgId, keyId, at, nonce), ...fields } } }, removal]);
        result.moved += 1;
      } catch (error) {
        if (!isConditionFailed(error, 'moved')) throw error;
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return result;
}

/** Moves the old uses of every organization. */
export const moveAllLegacyApiKeyUses = (now: Date) =>
  sumOverOrganizations((orgId) => moveLegacyApiKeyUses(orgId, now), { moved: 0, expired: 0 });
