import { describe, expect, it } from 'vitest';
import { getMany } from '#lib/db/batch';
import { dynamo } from '#lib/db/client';
import { putGrouped } from '#lib/db/grouped-puts';

/**
 * Group commit of bookkeeping puts: a put goes out at once when none is in flight, the puts that come
 * meanwhile go out together, and each caller learns when its own item is stored, or that it was not.
 */

const batchWrites: number[] = [];
let counting = false;
dynamo.middlewareStack.add(
  (next, context) => async (args) => {
    if (counting && context.commandName === 'BatchWriteItemCommand') {
      const requests = (args.input as { RequestItems: Record<string, unknown[]> }).RequestItems;
      batchWrites.push(Object.values(requests).reduce((sum, list) => sum + list.length, 0));
    }
    return next(args);
  },
  { step: 'initialize', name: 'countGroupedPuts' },
);

async function counted(work: () => Promise<unknown>): Promise<number[]> {
  batchWrites.length = 0;
  counting = true;
  try {
    await work();
    return [...batchWrites];
  } finally {
    counting = false;
  }
}

const keyOf = (run: string, index: number) => ({ pk: `GROUPEDPUTS#${run}`, sk: String(index) });
const itemOf = (run: string, index: number) => ({ ...keyOf(run, index), index });
const stored = (keys: Array<{ pk: string; sk: string }>) => getMany(keys, { consistent: true });

describe('putGrouped', () => {
  it('stores a lone item in one call of its own', async () => {
    const run = `lone-${Date.now()}`;

    const calls = await counted(() => putGrouped(itemOf(run, 1)));

    expect(calls).toEqual([1]);
    expect(await stored([keyOf(run, 1)])).toEqual([itemOf(run, 1)]);
  });

  it('stores every item of many sent at once, in far fewer calls, none over 25 items', async () => {
    const run = `many-${Date.now()}`;
    const items = Array.from({ length: 60 }, (_, index) => itemOf(run, index));

    const calls = await counted(() => Promise.all(items.map((item) => putGrouped(item))));

    expect(calls.reduce((sum, size) => sum + size, 0)).toBe(60);
    expect(calls.length).toBeLessThan(10);
    expect(Math.max(...calls)).toBeLessThanOrEqual(25);
    expect(await stored(items.map((item) => keyOf(run, item.index)))).toEqual(items);
  });

  it('rejects the puts of a call that fails, and the next puts are stored', async () => {
    const run = `failed-${Date.now()}`;
    // An item without its sort key: DynamoDB refuses the whole call.
    const invalid = { pk: `GROUPEDPUTS#${run}`, index: 0 };

    const refused = await putGrouped(invalid).then(
      () => 'stored',
      (error: Error) => error.name,
    );
    await putGrouped(itemOf(run, 1));

    expect(refused).toBe('ValidationException');
    expect(await stored([keyOf(run, 1)])).toEqual([itemOf(run, 1)]);
  });
});
