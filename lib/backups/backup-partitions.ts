import { ACTOR_TYPES, activityKeys } from '#lib/activity/activity-keys';
import { billingKeys } from '#lib/billing/billing-keys';
import { getMany } from '#lib/db/batch';
import { prefixEnd, type TableKey, tenantPk } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { engineKeys } from '#lib/discovery/engine-keys';
import { runKeys } from '#lib/discovery/run-keys';
import { factoryKeys } from '#lib/factory/factory-keys';
import { fileKeys } from '#lib/files/file-keys';
import { apiKeyKeys } from '#lib/identity/api-key-records';
import { teamKeys } from '#lib/identity/team-records';
import { jobKeys } from '#lib/jobs/job-keys';
import { logKeys } from '#lib/logs/log-records';
import { metricKeys } from '#lib/metrics/metric-keys';
import { LEGACY_POSTING_PREFIX } from '#lib/tasks/search-index';
import { assigneeKey, taskKeys, UNASSIGNED } from '#lib/tasks/task-keys';

/**
 * Every place an organization's items live, how a backup reads them and how a restore writes them back.
 * Items live in partitions, never only in an index, so an export is a set of paged Queries (no Scan):
 *
 * - `T#<org>`, its records: exported whole; restored but for its identity records, which stay as they
 *   are; an empty organization holds nothing here but identity records (and API key uses an installation
 *   wrote here before they had partitions of their own).
 * - `T#<org>#METRICS`, its counters: exported; restored; an empty organization has none.
 * - `T#<org>#TASKTERMS`, the search postings of its tasks (a hundred or more per task): derived from the
 *   tasks, so neither exported nor restored; a restore indexes the tasks it writes (and drops the
 *   whole-word postings, `TASKWORD#…`, that a backup taken before the term index holds).
 * - `T#<org>#QUEUE#<assignee>`, queue entries of todo tasks: exported for every assignee its tasks name,
 *   and `-`; restored; not checked for emptiness (they follow the tasks).
 * - `T#<org>#ACTIVITY#<actor type>` (4), `T#<org>#LOGS` and `T#<org>#APIKEYUSE#<key>` (for every key its
 *   records name), append-only entries with unique keys: exported; restored beside entries written since
 *   the loss; not checked.
 * - `T#<org>#ACTIVITYCOUNT`, counts of the activity entries: exported; restored by adding to the counts
 *   there; not checked.
 * - `APIKEYHASH#…`, `TEAMINVITETOKEN#…`, `PAYCUSTOMER#…`, the lookups of its API keys, team invites and
 *   payment customer: exported when its records name them and they are its own (`org_id`); restored
 *   unless another organization holds the key now.
 * - `T#<org>#BACKUPS`, the backups' own records (backup-keys.ts): neither exported nor restored.
 *
 * Identity records are the organization itself (`ORG`) and its memberships (`MEMBER#…`): who may act in
 * it, the restore's caller among them. A queue count shard left at zero by a task that moved to another
 * assignee is not exported (no task names its queue any more); it counted nothing. The lookup of a
 * pending organization invite is not exported either (only the emailed token's hash names it): such an
 * invite is sent again after a restore.
 *
 * A partition beside `T#<org>` that a new area adds must be named here; tests/unit/backups finds every
 * `${tenantPk(…)}#<NAME>` in lib and fails for a name this module does not place.
 */
export const PARTITION_SUFFIXES = {
  exported: [
    '#ACTIVITY',
    '#ACTIVITYCOUNT',
    '#METRICS',
    '#LOGS',
    '#QUEUE',
    '#FILES',
    '#DISCOVERYRUNS',
    '#JOBS',
    '#JQ',
    '#FACTORY',
    '#APIKEYUSE',
  ],
  /** The backups' own records, and derived data a restore rebuilds (task search terms). */
  notExported: ['#BACKUPS', '#TASKTERMS'],
  /** Index partition keys (gsi1pk, gsi2pk): the items are in partitions above. */
  indexOnly: ['#TASKS', '#ASSIGNEE', '#CHANGELOG', '#DEPLOYMENTS', '#RULES'],
};

const IDENTITY_PREFIXES = ['MEMBER#'];
const IDENTITY_KEYS = ['ORG'];
/** Records in `T#<org>` that an empty organization may hold: identity, and API key uses not yet moved out. */
const TOLERATED_PREFIXES = ['APIKEYUSE#', ...IDENTITY_PREFIXES].sort();

export const isIdentityRecord = (sk: string): boolean =>
  IDENTITY_KEYS.includes(sk) || IDENTITY_PREFIXES.some((prefix) => sk.startsWith(prefix));

const POINTER_PREFIXES = ['APIKEYHASH#', 'TEAMINVITETOKEN#', 'PAYCUSTOMER#'];

type Item = Record<string, unknown> & { pk: string; sk: string };

/** The partitions read after `T#<org>`, whose names do not depend on its records. */
export const sidePartitions = (orgId: string): string[] => [
  metricKeys.orgPk(orgId),
  ...ACTOR_TYPES.map((type) => activityKeys.entryPk(orgId, type)),
  activityKeys.countPk(orgId),
  logKeys.partition(orgId),
  fileKeys.pk(orgId),
  jobKeys.jobsPk(orgId),
  jobKeys.countsPk(orgId),
  factoryKeys.pk(orgId),
];

/** What reading the records of `T#<org>` tells about the partitions and lookups to read after them. */
export class Followers {
  readonly queues = new Set<string>([UNASSIGNED]);
  readonly engines = new Set<number>();
  readonly apiKeys = new Set<string>();
  readonly pointers = new Map<string, TableKey>();

  note(item: Item): void {
    const { sk } = item;
    if (sk.startsWith(taskKeys.prefix)) this.queues.add(assigneeKey((item.assignee as string | null) ?? null));
    if (sk.startsWith(engineKeys.prefix) && typeof item.id === 'number') this.engines.add(item.id);
    const add = (key: TableKey) => this.pointers.set(`${key.pk}|${key.sk}`, key);
    if (sk.startsWith('APIKEY#')) {
      if (typeof item.id === 'string') this.apiKeys.add(item.id);
      for (const hash of [item.key_hash, item.grace_key_hash])
        if (typeof hash === 'string') add(apiKeyKeys.lookup(hash));
    }
    if (sk.startsWith('TEAMINVITE#') && typeof item.token_hash === 'string') add(teamKeys.inviteToken(item.token_hash));
    if (sk === 'SUBSCRIPTION' && typeof item.customer_id === 'string' && item.customer_id) {
      add(billingKeys.customer(item.customer_id));
    }
  }

  /** The task queues of the assignees its tasks name, the run partitions of its discovery engines, its keys' uses. */
  partitions(orgId: string): string[] {
    return [
      ...[...this.queues].sort().map((assignee) => taskKeys.queuePk(orgId, assignee)),
      ...[...this.engines].sort((a, b) => a - b).map((id) => runKeys.partition(orgId, id)),
      ...[...this.apiKeys].sort().map((keyId) => apiKeyKeys.usesPk(orgId, keyId)),
    ];
  }
}

/** Every item of a partition, a page (up to 1 MB) at a time, read strongly consistently. */
export async function* partitionPages(pk: string): AsyncGenerator<Item[]> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ConsistentRead: true,
      ExclusiveStartKey: startKey,
    });
    yield (page.Items ?? []) as Item[];
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** The lookup items that exist and belong to the organization. */
export async function pointerItems(orgId: string, keys: TableKey[]): Promise<Item[]> {
  const found = await getMany<Item>(keys, { consistent: true });
  return found.filter((item): item is Item => item !== undefined && item.org_id === orgId);
}

/**
 * How a restore writes an item back into the organization, or undefined when the item is not the
 * organization's to write (another tenant's partition, the backups' own, an unknown global record).
 * `derived`: not written, the restore rebuilds it (search postings).
 */
export type RestoreWrite = 'keep-identity' | 'put' | 'add-counts' | 'pointer' | 'derived';

export function restoreWriteOf(orgId: string, item: Item): RestoreWrite | undefined {
  const own = tenantPk(orgId);
  if (item.pk === own) {
    if (item.sk.startsWith(LEGACY_POSTING_PREFIX)) return 'derived';
    return isIdentityRecord(item.sk) ? 'keep-identity' : 'put';
  }
  if (item.pk === activityKeys.countPk(orgId)) return 'add-counts';
  if (item.pk.startsWith(`${own}#`)) {
    const suffix = `#${item.pk.slice(own.length + 1).split('#')[0]}`;
    return PARTITION_SUFFIXES.exported.includes(suffix) ? 'put' : undefined;
  }
  if (POINTER_PREFIXES.some((prefix) => item.pk.startsWith(prefix)) && item.org_id === orgId) return 'pointer';
  return undefined;
}

/**
 * The kinds of records that keep the organization from being empty (at most a few): any record of
 * `T#<org>` but identity and API key uses, and any counter of `T#<org>#METRICS`. Each check is a Query
 * of a few items over a key range that skips the tolerated records, so it costs the same however many
 * members the organization has.
 */
export async function recordsPresent(orgId: string): Promise<string[]> {
  const pk = tenantPk(orgId);
  const ranges: Array<{ condition: string; values: Record<string, string> }> = [];
  let after: string | undefined;
  for (const prefix of TOLERATED_PREFIXES) {
    ranges.push(
      after === undefined
        ? { condition: 'sk < :to', values: { ':to': prefix } }
        : { condition: 'sk BETWEEN :from AND :to', values: { ':from': after, ':to': prefix } },
    );
    after = prefixEnd(prefix);
  }
  ranges.push({ condition: 'sk > :from', values: { ':from': after as string } });
  const found = await Promise.all([
    ...ranges.map(async ({ condition, values }) => {
      const { Items = [] } = await table.query({
        KeyConditionExpression: `pk = :pk AND ${condition}`,
        ExpressionAttributeValues: { ':pk': pk, ...values },
        ConsistentRead: true,
        Limit: 2,
      });
      return Items.map((item) => String(item.sk)).filter((sk) => !isIdentityRecord(sk));
    }),
    table
      .query({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': metricKeys.orgPk(orgId) },
        ConsistentRead: true,
        Limit: 1,
      })
      .then(({ Items = [] }) => Items.map(() => 'METRICS')),
  ]);
  return [...new Set(found.flat().map((sk) => sk.split('#')[0] as string))];
}
