import { AsyncLocalStorage } from 'node:async_hooks';
import type { TableKey } from '#lib/db/keys';

/**
 * What the table's calls know of the HTTP request they serve, so that a request's handler may start
 * reading before the request is admitted, and find read what authentication read for it:
 *
 * - a gate: while authentication or the rate limit is still deciding, every write (any DynamoDB write
 *   command, through the client, lib/db/client.ts) waits for the decision, and fails with the refusal
 *   when the request is refused; reads go ahead. The decision's own writes (the rate-limit counter,
 *   usage records) are sent `ungated`;
 * - items read ahead: items a route names up front (a task by its id), read in the same round trip as
 *   the caller's credential once the caller's organization is known, and handed to the first eventually
 *   consistent GetItem of that key (lib/db/table.ts) instead of a call of its own.
 *
 * Outside a request (queue consumers, schedules, tests calling the domain) there is no scope: nothing
 * waits, nothing is read ahead. The HTTP layer opens one per request (lib/http/group-handler.ts).
 */
interface RequestScope {
  gate: Promise<void> | undefined;
  readAhead: Map<string, Record<string, unknown> | null>;
}

const storage = new AsyncLocalStorage<RequestScope>();

const keyOf = (key: TableKey) => `${key.pk}|${key.sk}`;

/** Runs one request's work in a scope of its own. */
export function withRequestScope<T>(work: () => Promise<T>): Promise<T> {
  return storage.run({ gate: undefined, readAhead: new Map() }, work);
}

/** From now on, the request's writes wait until `gate` settles; they fail with its error if it rejects. */
export function holdWritesUntil(gate: Promise<void>): void {
  const scope = storage.getStore();
  if (!scope) return;
  // The refusal reaches whoever waits on it; the gate itself never goes unhandled.
  gate.catch(() => undefined);
  scope.gate = gate;
}

/** What writes of the current request wait for, if anything. */
export const writeGate = (): Promise<void> | undefined => storage.getStore()?.gate;

/** Runs `work` outside the request's scope, its writes not waiting: the admission's own bookkeeping. */
export function ungated<T>(work: () => Promise<T>): Promise<T> {
  return storage.getStore() ? storage.exit(work) : work();
}

/** Keeps items read ahead for the request (undefined: the item does not exist). */
export function keepReadAhead(keys: TableKey[], items: Array<Record<string, unknown> | undefined>): void {
  const scope = storage.getStore();
  if (!scope) return;
  keys.forEach((key, index) => {
    scope.readAhead.set(keyOf(key), items[index] ?? null);
  });
}

/**
 * The item read ahead for `key`, once: `{ item }` (undefined when it does not exist), or undefined
 * when none was read ahead. A later read of the key reads the table.
 */
export function takeReadAhead(key: TableKey): { item: Record<string, unknown> | undefined } | undefined {
  const scope = storage.getStore();
  if (!scope || scope.readAhead.size === 0) return undefined;
  const id = keyOf(key);
  if (!scope.readAhead.has(id)) return undefined;
  const item = scope.readAhead.get(id);
  scope.readAhead.delete(id);
  return { item: item ?? undefined };
}

/** Forgets what was read ahead: a write may have changed it. */
export function dropReadAhead(): void {
  storage.getStore()?.readAhead.clear();
}
