import { countUpTo, queryUpTo } from '#lib/db/paging';
import { table } from '#lib/db/table';
import { type JobItem, type JobStatus, jobKeys, type Lane, upTo } from '#lib/jobs/job-keys';

/**
 * The engine's reads (keys: lib/jobs/job-keys.ts). Each is a Query of one key range of an index, bounded
 * by what its caller needs: a claim reads the first few ready jobs of its queue, never the queue.
 */

export interface QueueRef {
  orgId: string;
  lane: Lane;
  queue: string;
}

export async function getJobItem(orgId: string, id: string, consistent = false): Promise<JobItem | undefined> {
  const { Item } = await table.get({ Key: jobKeys.byId(orgId, id), ConsistentRead: consistent });
  return Item as JobItem | undefined;
}

/** What a claim may take: a job type, a tenant (the organization's own customer id). */
export interface ClaimFilter {
  type?: string;
  tenantId?: number;
}

interface Filter {
  FilterExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

function filterOf(filter: ClaimFilter): Filter {
  const clauses: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (filter.type !== undefined) {
    clauses.push('#type = :type');
    names['#type'] = 'type';
    values[':type'] = filter.type;
  }
  if (filter.tenantId !== undefined) {
    clauses.push('tenant_id = :tenant');
    values[':tenant'] = filter.tenantId;
  }
  return clauses.length === 0
    ? {}
    : {
        FilterExpression: clauses.join(' AND '),
        ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
      };
}

/** A filtered claim reads at most this many ready jobs to find its candidates. */
const MAX_FILTERED_READ = 500;

/**
 * The first `want` ready jobs of a queue in claim order (higher priority first, then the longest
 * available), matching `filter`. A filter is applied as the range is read, up to MAX_FILTERED_READ jobs.
 */
export async function readyJobs(ref: QueueRef, want: number, filter: ClaimFilter = {}): Promise<JobItem[]> {
  const found: JobItem[] = [];
  const filtered = filterOf(filter);
  let read = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const limit = filtered.FilterExpression ? Math.min(100, MAX_FILTERED_READ - read) : want - found.length;
    const result = await table.query({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ...filtered,
      ExpressionAttributeValues: {
        ':pk': jobKeys.state(ref.orgId, ref.lane, ref.queue, 'READY'),
        ...filtered.ExpressionAttributeValues,
      },
      Limit: limit,
      ExclusiveStartKey: startKey,
    });
    read += result.ScannedCount ?? 0;
    found.push(...((result.Items ?? []) as JobItem[]));
    startKey = result.LastEvaluatedKey;
  } while (startKey && found.length < want && read < MAX_FILTERED_READ);
  return found.slice(0, want);
}

/** Scheduled and retrying jobs of a queue whose time has come, the longest due first. */
export async function dueJobs(ref: QueueRef, now: Date, max: number): Promise<JobItem[]> {
  const { items } = await queryUpTo<JobItem>(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk <= :upto',
      ExpressionAttributeValues: {
        ':pk': jobKeys.state(ref.orgId, ref.lane, ref.queue, 'WAIT'),
        ':upto': upTo(now.toISOString()),
      },
    },
    max,
  );
  return items;
}

/** Running jobs of a queue whose lease has run out, the longest expired first. */
export async function expiredLeases(ref: QueueRef, now: Date, max: number): Promise<JobItem[]> {
  const { items } = await queryUpTo<JobItem>(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :now',
      ExpressionAttributeValues: {
        ':pk': jobKeys.state(ref.orgId, ref.lane, ref.queue, 'LEASE'),
        ':now': now.toISOString(),
      },
    },
    max,
  );
  return items;
}

/** Running jobs of a queue, the soonest lease expiry first (whom the workers hold). */
export async function runningJobs(ref: QueueRef, max: number) {
  return queryUpTo<JobItem>(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': jobKeys.state(ref.orgId, ref.lane, ref.queue, 'LEASE') },
    },
    max,
  );
}

/** The earliest scheduled or retrying job of a queue (due or not). */
export async function nextWaiting(ref: QueueRef): Promise<JobItem | undefined> {
  const { items } = await queryUpTo<JobItem>(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': jobKeys.state(ref.orgId, ref.lane, ref.queue, 'WAIT') },
    },
    1,
  );
  return items[0];
}

/** Statuses listed oldest first (what runs next first); the others newest first. */
const OLDEST_FIRST: readonly JobStatus[] = ['scheduled', 'queued', 'retrying'];

/**
 * A page of a queue's jobs of one status, from gsi2, skipping `offset` of them; finished ones only
 * from `since` (the first kept day) on.
 */
export async function jobsByStatus(
  ref: QueueRef,
  status: JobStatus,
  page: { limit: number; offset: number; since?: string },
): Promise<JobItem[]> {
  if (page.limit <= 0) return [];
  const pk = jobKeys.byStatus(ref.orgId, ref.lane, ref.queue, status);
  const ranged = page.since !== undefined;
  const { items } = await queryUpTo<JobItem>(
    {
      IndexName: 'gsi2',
      KeyConditionExpression: ranged ? 'gsi2pk = :pk AND gsi2sk >= :since' : 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': pk, ...(ranged ? { ':since': page.since } : {}) },
      ScanIndexForward: OLDEST_FIRST.includes(status),
    },
    page.offset + page.limit,
  );
  return items.slice(page.offset);
}

/** How many jobs of a queue went dead since `since` (ISO time), counting at most `max`. */
export const deadSince = (ref: QueueRef, since: string, max: number) =>
  countUpTo(
    {
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk >= :since',
      ExpressionAttributeValues: { ':pk': jobKeys.byStatus(ref.orgId, ref.lane, ref.queue, 'dead'), ':since': since },
    },
    max,
  );
