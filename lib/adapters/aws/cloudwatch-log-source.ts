import {
  CloudWatchLogsClient,
  DescribeLogGroupsCommand,
  DescribeLogStreamsCommand,
  FilterLogEventsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import type { LogSource, ServiceLogEntry, ServiceLogFile, ServiceLogRead } from '#lib/kernel/ports';
import { belongsTo, LOG_ORG_FIELDS } from '#lib/kernel/service-log';

/**
 * The AWS log source: the CloudWatch log groups of the service's functions, `/aws/lambda/<service>-<stage>-<function>`,
 * found by their shared prefix (LOG_GROUP_PREFIX, set by serverless.yml). Only the logs function uses it,
 * with a role allowed `logs:DescribeLogGroups`, `logs:DescribeLogStreams` and `logs:FilterLogEvents` on
 * those groups alone (infra/aws/logs.yml).
 *
 * A read asks every group for the organization's lines with FilterLogEvents, newest first
 * (`startFromHead: false`) over the last `lookbackMs`, the organization named in the filter pattern so
 * CloudWatch sends no other tenant's lines; each line is checked again here before it is kept. The work
 * is bounded: at most `pagesPerGroup` calls per group, `concurrency` groups at a time (FilterLogEvents
 * allows an account a few calls a second), and `complete` says when a group had more to give.
 */
export interface CloudWatchLogSourceOptions {
  /** The shared beginning of the function log groups' names, e.g. `/aws/lambda/agent-ops-prod-`. */
  groupPrefix: string | undefined;
  now?: () => number;
  lookbackMs?: number;
  pagesPerGroup?: number;
  concurrency?: number;
  /** The list of groups is read again after this long (functions are added by deployments only). */
  groupsTtlMs?: number;
}

const DAY_MS = 86_400_000;
/** Newest-first reads (`startFromHead: false`) refuse a start before this instant. */
const NEWEST_FIRST_SINCE = Date.UTC(2024, 0, 1);
/** DescribeLogGroups answers at most 50 groups a page; the service has fewer functions than that. */
const MAX_GROUPS = 50;
/** Organization ids are `org_` and base62; anything else could not be put into a filter pattern safely. */
const SAFE_ORG_ID = /^[A-Za-z0-9_-]{1,64}$/;

interface Group {
  name: string;
  storedBytes: number;
}

export function cloudWatchLogSource(client: CloudWatchLogsClient, options: CloudWatchLogSourceOptions): LogSource {
  const now = options.now ?? Date.now;
  const lookbackMs = options.lookbackMs ?? 7 * DAY_MS;
  const pagesPerGroup = options.pagesPerGroup ?? 2;
  const concurrency = options.concurrency ?? 4;
  const groupsTtlMs = options.groupsTtlMs ?? 300_000;
  let known: { groups: Promise<Group[]>; at: number } | undefined;

  const groups = (): Promise<Group[]> => {
    const prefix = options.groupPrefix;
    if (!prefix) throw new Error('No log group prefix is configured (LOG_GROUP_PREFIX)');
    if (!known || now() - known.at > groupsTtlMs) {
      const listing = describeGroups(client, prefix);
      known = { groups: listing, at: now() };
      listing.catch(() => {
        known = undefined;
      });
    }
    return known.groups;
  };

  return {
    kind: 'cloudwatch',
    async files() {
      const found = await groups();
      return mapLimit(found, concurrency, async (group): Promise<ServiceLogFile> => {
        const { logStreams } = await client.send(
          new DescribeLogStreamsCommand({
            logGroupName: group.name,
            orderBy: 'LastEventTime',
            descending: true,
            limit: 1,
          }),
        );
        const last = logStreams?.[0]?.lastEventTimestamp;
        return {
          name: group.name,
          kind: 'log_group',
          size_bytes: group.storedBytes,
          last_modified: last ? new Date(last).toISOString() : null,
        };
      });
    },
    async read({ orgId, keep, limit }): Promise<ServiceLogRead> {
      if (!SAFE_ORG_ID.test(orgId)) return { entries: [], complete: true };
      const endTime = now();
      const request = {
        startTime: Math.max(endTime - lookbackMs, NEWEST_FIRST_SINCE),
        endTime,
        filterPattern: orgPattern(orgId),
        startFromHead: false,
        limit,
      };
      const perGroup = await mapLimit(await groups(), concurrency, async (group) => {
        const entries: ServiceLogEntry[] = [];
        let nextToken: string | undefined;
        for (let page = 0; page < pagesPerGroup; page += 1) {
          const answer = await client.send(
            new FilterLogEventsCommand({ ...request, logGroupName: group.name, ...(nextToken ? { nextToken } : {}) }),
          );
          for (const event of answer.events ?? []) {
            const entry = entryOf(event, group.name, orgId);
            if (entry && keep(entry.record)) entries.push(entry);
          }
          nextToken = answer.nextToken;
          if (!nextToken || entries.length >= limit) return { entries, complete: true };
        }
        return { entries, complete: false };
      });
      const entries = perGroup
        .flatMap((group) => group.entries)
        .sort((a, b) => b.time - a.time)
        .slice(0, limit);
      return { entries, complete: perGroup.every((group) => group.complete) };
    },
  };
}

/** A JSON filter pattern matching the lines that name `orgId` in either organization field. */
export const orgPattern = (orgId: string): string =>
  `{ ${LOG_ORG_FIELDS.map((field) => `($.${field} = "${orgId}")`).join(' || ')} }`;

async function describeGroups(client: CloudWatchLogsClient, prefix: string): Promise<Group[]> {
  const { logGroups } = await client.send(
    new DescribeLogGroupsCommand({ logGroupNamePrefix: prefix, limit: MAX_GROUPS }),
  );
  return (logGroups ?? [])
    .filter((group) => group.logGroupName?.startsWith(prefix))
    .map((group) => ({ name: group.logGroupName as string, storedBytes: group.storedBytes ?? 0 }));
}

function entryOf(
  event: { eventId?: string; timestamp?: number; message?: string },
  origin: string,
  orgId: string,
): ServiceLogEntry | undefined {
  if (!event.eventId || event.timestamp === undefined || !event.message) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(event.message.trim());
  } catch {
    return undefined;
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return undefined;
  const fields = record as Record<string, unknown>;
  // CloudWatch matched the pattern; the line is still checked here, as every source does.
  if (!belongsTo(fields, orgId)) return undefined;
  return { id: event.eventId, origin, time: event.timestamp, record: fields };
}

/** `work` on every item, at most `limit` at a time, answers in the items' order. */
async function mapLimit<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** Retries with client-side rate limiting: FilterLogEvents throttles an account at a few calls a second. */
export const cloudWatchLogsClient = (region: string) =>
  new CloudWatchLogsClient({ region, retryMode: 'adaptive', maxAttempts: 4 });
