import { writeChunk } from '#lib/db/batch';
import { ungated } from '#lib/db/request-scope';

/**
 * Puts of items that many requests in flight each need stored before they answer, and that need nothing
 * else (an API key's usage record): group commit. When no call is in flight the item goes out at once;
 * items that come while one is in flight wait for it and then go out together, 25 to a BatchWriteItem.
 * So a lone request waits for nothing more than its own put, and a busy process sends one call for many
 * requests instead of one each. A Lambda serves one request at a time: there every group holds one item.
 *
 * Each caller's promise settles when its own item is stored, and rejects with the call's error if the
 * call fails (after the SDK's retries); unprocessed items are sent again until stored. The puts are sent
 * outside any request's scope (lib/db/request-scope.ts): they are the admission's own bookkeeping, never
 * held by a request's gate.
 */
const BATCH_LIMIT = 25;

interface Waiting {
  item: object;
  stored: () => void;
  failed: (error: unknown) => void;
}

let waiting: Waiting[] = [];
let inFlight = 0;

export function putGrouped(item: object): Promise<void> {
  return new Promise<void>((stored, failed) => {
    waiting.push({ item, stored, failed });
    if (inFlight === 0 || waiting.length >= BATCH_LIMIT) void ungated(sendWaiting);
  });
}

async function sendWaiting(): Promise<void> {
  while (waiting.length > 0) {
    const group = waiting.slice(0, BATCH_LIMIT);
    waiting = waiting.slice(BATCH_LIMIT);
    inFlight += 1;
    try {
      await writeChunk(group.map(({ item }) => ({ PutRequest: { Item: item } })));
      for (const put of group) put.stored();
    } catch (error) {
      for (const put of group) put.failed(error);
    } finally {
      inFlight -= 1;
    }
    // Items that came meanwhile go out now, unless a full group already took them.
    if (inFlight > 0) return;
  }
}
