import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';

/**
 * DynamoDB's capacity units for every call a client makes, as AWS bills them, measured on DynamoDB Local.
 * A middleware adds ReturnConsumedCapacity TOTAL to each call and reads the units DynamoDB Local reports,
 * which follow AWS for single-item writes (1 KB a unit, every index written counted), GetItem and Query (4
 * KB a unit, halved when eventually consistent), with three exceptions corrected here:
 *
 * - a BatchGetItem key that finds nothing: DynamoDB Local counts 0, AWS the minimum read (0.5, or 1 when
 *   strongly consistent); added per missing key;
 * - a Query or Scan that reads nothing: DynamoDB Local counts 0, AWS the minimum read; added;
 * - TransactWriteItems: DynamoDB Local reports 4 units for a transaction of up to 1 KB in all, whatever its
 *   number of items, and 4 more per index. AWS bills each action twice what it would cost alone. So each
 *   action is replayed alone, without its condition, on a shadow table (same keys and indexes) holding a
 *   copy of the item it targets, and twice its units are counted (a ConditionCheck: twice its item's
 *   size in KB, at least 2). This replay happens before the transaction is sent; its Node CPU time is
 *   kept in `excludedCpuMicros` so that the caller can leave it out of what it measures.
 *
 * The service sends every call through the document client, whose inputs this middleware sees before they
 * are marshalled; a replay of a marshalled input would be wrong, so it throws.
 *
 * @example
 * const capacity = trackCapacity(dynamo, shadowClient, 'bench-cost-shadow');
 * capacity.reset(); await work(); console.log(capacity.readUnits, capacity.writeUnits);
 */
export interface CapacityTracker {
  readUnits: number;
  writeUnits: number;
  /** DynamoDB calls, and the waves of them in flight (round trips on the critical path). */
  calls: number;
  roundTrips: number;
  /** Node CPU time and time spent on the shadow replay, not the service's own. */
  excludedCpuMicros: number;
  excludedMs: number;
  counting: boolean;
  reset(): void;
}

type Item = Record<string, unknown>;
const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);

export function trackCapacity(
  client: DynamoDBClient,
  shadowClient: DynamoDBClient,
  shadowTable: string,
): CapacityTracker {
  let inFlight = 0;
  const options = { marshallOptions: { removeUndefinedValues: true } };
  // The replay reads the real table through a client of its own, so that this middleware never sees it.
  const replay = DynamoDBDocumentClient.from(shadowClient, options);
  const tracker: CapacityTracker = {
    readUnits: 0,
    writeUnits: 0,
    calls: 0,
    roundTrips: 0,
    excludedCpuMicros: 0,
    excludedMs: 0,
    counting: false,
    reset() {
      Object.assign(tracker, {
        readUnits: 0,
        writeUnits: 0,
        calls: 0,
        roundTrips: 0,
        excludedCpuMicros: 0,
        excludedMs: 0,
      });
    },
  };

  const unitsOf = (consumed: unknown) =>
    [consumed ?? []]
      .flat()
      .reduce((sum: number, entry) => sum + ((entry as { CapacityUnits?: number }).CapacityUnits ?? 0), 0);

  /** Twice what each action of a transaction would cost alone, replayed on the shadow table. */
  async function transactionUnits(table: string, actions: Array<Record<string, Record<string, unknown>>>) {
    let units = 0;
    for (const action of actions) {
      const [kind, body] = Object.entries(action)[0] as [string, Record<string, unknown>];
      const key = (kind === 'Put' ? body.Item : body.Key) as Item;
      if (typeof key.pk !== 'string') throw new Error('capacity: a marshalled transaction cannot be replayed');
      const keyOnly = { pk: key.pk, sk: key.sk };
      const current = await replay.send(new GetCommand({ TableName: table, Key: keyOnly, ConsistentRead: true }));
      if (current.Item) await replay.send(new PutCommand({ TableName: shadowTable, Item: current.Item }));
      else await replay.send(new DeleteCommand({ TableName: shadowTable, Key: keyOnly }));
      const alone = { TableName: shadowTable, ReturnConsumedCapacity: 'TOTAL' as const };
      const values = body.ExpressionAttributeValues as Item | undefined;
      if (kind === 'Put') {
        units += unitsOf((await replay.send(new PutCommand({ ...alone, Item: key }))).ConsumedCapacity);
      } else if (kind === 'Update') {
        const expression = body.UpdateExpression as string;
        const names = body.ExpressionAttributeNames as Record<string, string> | undefined;
        const update = await replay.send(
          new UpdateCommand({
            ...alone,
            Key: keyOnly,
            UpdateExpression: expression,
            ...usedOnly('ExpressionAttributeNames', names, expression),
            ...usedOnly('ExpressionAttributeValues', values, expression),
          }),
        );
        units += unitsOf(update.ConsumedCapacity);
      } else if (kind === 'Delete') {
        units += unitsOf((await replay.send(new DeleteCommand({ ...alone, Key: keyOnly }))).ConsumedCapacity);
      } else {
        units += Math.max(1, Math.ceil(itemBytes(current.Item) / 1024));
      }
    }
    return 2 * units;
  }

  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!tracker.counting) return next(args);
      const name = (context.commandName as string).replace('Command', '');
      const input = args.input as Record<string, unknown> & { ReturnConsumedCapacity?: string };
      let replayed: number | undefined;
      if (name === 'TransactWriteItems') {
        const cpu = process.cpuUsage();
        const started = performance.now();
        const actions = input.TransactItems as Array<Record<string, Record<string, unknown>>>;
        const table = Object.values(actions[0] ?? {})[0]?.TableName as string;
        replayed = await transactionUnits(table, actions);
        const spent = process.cpuUsage(cpu);
        tracker.excludedCpuMicros += spent.user + spent.system;
        tracker.excludedMs += performance.now() - started;
      }
      input.ReturnConsumedCapacity = 'TOTAL';
      tracker.calls += 1;
      if (inFlight === 0) tracker.roundTrips += 1;
      inFlight += 1;
      try {
        const result = await next(args);
        const output = result.output as unknown as Record<string, unknown> & { ConsumedCapacity?: unknown };
        let units = replayed ?? unitsOf(output.ConsumedCapacity);
        units += minimumReads(name, input, output);
        if (READS.has(name)) tracker.readUnits += units;
        else tracker.writeUnits += units;
        return result;
      } finally {
        inFlight -= 1;
      }
    },
    { step: 'initialize', name: 'capacityAsBilled' },
  );
  return tracker;
}

/** What AWS charges for reads that find nothing and DynamoDB Local does not. */
function minimumReads(name: string, input: Record<string, unknown>, output: Record<string, unknown>): number {
  if (name === 'Query' || name === 'Scan') {
    const reported = [output.ConsumedCapacity ?? []].flat() as Array<{ CapacityUnits?: number }>;
    const units = reported.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
    return units === 0 ? (input.ConsistentRead ? 1 : 0.5) : 0;
  }
  if (name !== 'BatchGetItem') return 0;
  let missing = 0;
  const requests = input.RequestItems as Record<string, { Keys: unknown[]; ConsistentRead?: boolean }>;
  const responses = (output.Responses ?? {}) as Record<string, unknown[]>;
  const unprocessed = (output.UnprocessedKeys ?? {}) as Record<string, { Keys?: unknown[] }>;
  for (const [table, request] of Object.entries(requests)) {
    const absent = request.Keys.length - (responses[table]?.length ?? 0) - (unprocessed[table]?.Keys?.length ?? 0);
    missing += absent * (request.ConsistentRead ? 1 : 0.5);
  }
  return missing;
}

/** DynamoDB refuses names and values an expression does not use (a condition's, dropped in the replay). */
function usedOnly<T>(field: string, record: Record<string, T> | undefined, expression: string) {
  const used = (name: string) => new RegExp(`${name.replace(/[$#:]/g, '\\$&')}(?![\\w])`).test(expression);
  const kept = Object.entries(record ?? {}).filter(([name]) => used(name));
  return kept.length > 0 ? { [field]: Object.fromEntries(kept) } : {};
}

/** An item's size as DynamoDB counts it, near enough: names and values in bytes. */
function itemBytes(item: Item | undefined): number {
  return item ? Buffer.byteLength(JSON.stringify(item)) : 0;
}
