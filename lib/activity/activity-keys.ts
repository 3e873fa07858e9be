import { tenantPk } from '#lib/db/keys';

/**
 * Where the activity log lives (writes: lib/activity/activity-log.ts; reads: lib/activity/activity-queries.ts).
 * The log grows with every change, so it lives in partitions of its own, never beside the records that
 * requests query, and expires: an entry is kept through the 90th UTC day after its own (`expires_at`,
 * the table's TTL, falls on a day boundary, so an entry and its day's counts leave together).
 *
 * | record | pk | sk | index keys |
 * |---|---|---|---|
 * | entry | `T#<org>#ACTIVITY#<actor type>` | `<at>#<nonce>` | see below |
 * | … by actor | gsi1 `T#<org>#ACTIVITY#<actor type>#ACTOR#<actor id>` | `<at>#<nonce>` | |
 * | … by action | gsi2 `T#<org>#ACTIVITY#<actor type>#ACTION#<action>` | `<at>#<nonce>` | |
 * | hour count | `T#<org>#ACTIVITYCOUNT` | `HOUR#<hour>#<shard>` | |
 * | action count | `T#<org>#ACTIVITYCOUNT` | `ACTION#<action>#<hour>#<shard>` | gsi1 (see below) |
 * | actor count | `T#<org>#ACTIVITYCOUNT` | `ACTOR#<actor id>#<hour>#<shard>` | |
 *
 * The action counts are also in gsi1 under `T#<org>#ACTIVITYCOUNT#HOURLY` / `<hour>#<action>#<shard>`, so
 * the stats find every action of a time window. `<hour>` is `yyyy-mm-ddThh` (UTC). Each count item holds
 * `total` and one count per actor type (`agent`, `system`, `user`, `api_key`), raised by ADD in the
 * transaction that writes the entry, in one of ACTIVITY_SHARDS shards picked at random (so that
 * concurrent changes of one organization seldom write the same count item). Every read is a Query of a
 * key range, so a request costs what its page and its time window hold, not what the log holds:
 *
 * | filter | entries (newest first) | `total` |
 * |---|---|---|
 * | none | the 4 actor-type partitions, merged | hour counts of the retention window, `total` |
 * | actor_type | its partition | hour counts, that type's count |
 * | action (± actor_type) | the action index partition of each type asked (4 or 1), merged | action counts |
 * | actor_id (± actor_type) | the actor index partition of each type asked, merged | actor counts |
 * | actor_id and action | the actor's partitions, filtered by action | counted from those entries |
 *
 * Only the last row reads more than its page: every entry of that actor in the window (the actor's
 * own activity, never the organization's). Stats (24 hours, 7 days) read the hour counts and the action
 * counts of the window through gsi1 (at most 168 hours × the actions of each hour × the shards).
 */
export const ACTOR_TYPES = ['agent', 'system', 'user', 'api_key'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** Days an entry is kept after the day it was written. */
export const RETENTION_DAYS = 90;
export const ACTIVITY_SHARDS = 4;

/**
 * What an actor id and an action may hold: they become parts of keys, so never `#` (the keys'
 * separator) nor white space or control characters.
 */
export const ACTOR_ID_PATTERN = /^[^#\s\p{Cc}]{1,200}$/u;
export const ACTION_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;

const entryPk = (orgId: string, type: ActorType) => `${tenantPk(orgId)}#ACTIVITY#${type}`;

export const activityKeys = {
  entryPk,
  byActorPk: (orgId: string, type: ActorType, actorId: string) => `${entryPk(orgId, type)}#ACTOR#${actorId}`,
  byActionPk: (orgId: string, type: ActorType, action: string) => `${entryPk(orgId, type)}#ACTION#${action}`,
  sort: (at: string, nonce: string) => `${at}#${nonce}`,
  countPk: (orgId: string) => `${tenantPk(orgId)}#ACTIVITYCOUNT`,
  hourCount: (hour: string, shard: number) => `HOUR#${hour}#${shard}`,
  hourPrefix: 'HOUR#',
  actionCount: (action: string, hour: string, shard: number) => `ACTION#${action}#${hour}#${shard}`,
  actionPrefix: (action: string) => `ACTION#${action}#`,
  actorCount: (actorId: string, hour: string, shard: number) => `ACTOR#${actorId}#${hour}#${shard}`,
  actorPrefix: (actorId: string) => `ACTOR#${actorId}#`,
  /** The action counts by hour (gsi1), for the stats of a time window. */
  hourlyActionsPk: (orgId: string) => `${tenantPk(orgId)}#ACTIVITYCOUNT#HOURLY`,
  hourlyActionSort: (hour: string, action: string, shard: number) => `${hour}#${action}#${shard}`,
};

export interface ActivityItem {
  pk: string;
  sk: string;
  gsi1pk: string;
  gsi1sk: string;
  gsi2pk: string;
  gsi2sk: string;
  id: string;
  actor_type: ActorType;
  actor_id: string;
  action: string;
  entity_type: string | null;
  entity_id: string | null;
  metadata: Record<string, unknown>;
  /** Who sent an entry through POST /activity-log (`user:<id>`, `api_key:<id>`); absent for the service's own. */
  recorded_by?: string;
  created_at: string;
  expires_at: number;
}

/** An entry as the API shows it. */
export interface ActivityRecord {
  id: string;
  actor_type: ActorType;
  actor_id: string;
  action: string;
  entity_type: string | null;
  entity_id: string | null;
  metadata: Record<string, unknown>;
  recorded_by: string | null;
  created_at: string;
}

export const toActivityRecord = (item: ActivityItem): ActivityRecord => ({
  id: item.id,
  actor_type: item.actor_type,
  actor_id: item.actor_id,
  action: item.action,
  entity_type: item.entity_type ?? null,
  entity_id: item.entity_id ?? null,
  metadata: item.metadata ?? {},
  recorded_by: item.recorded_by ?? null,
  created_at: item.created_at,
});

const DAY_MS = 86_400_000;

/** `yyyy-mm-ddThh` of a time (UTC): the hour its counts go to. */
export const hourOf = (at: Date): string => at.toISOString().slice(0, 13);

/** Midnight (UTC) of the day of `at`, in epoch milliseconds. */
const dayStart = (at: Date): number => Math.floor(at.getTime() / DAY_MS) * DAY_MS;

/** When an entry written at `at` expires (epoch seconds): the end of the RETENTION_DAYS-th day after its own. */
export const expiryOf = (at: Date): number => (dayStart(at) + (RETENTION_DAYS + 1) * DAY_MS) / 1000;

/** The first hour whose entries are still kept at `now`: midnight of the day RETENTION_DAYS before. */
export const retentionStartHour = (now: Date): string => hourOf(new Date(dayStart(now) - RETENTION_DAYS * DAY_MS));

/** The first hour of a window of `hours` hours ending with the hour of `now`. */
export const windowStartHour = (now: Date, hours: number): string =>
  hourOf(new Date(now.getTime() - (hours - 1) * 3_600_000));
