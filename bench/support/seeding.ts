import { memoryQueue } from '#lib/adapters/local/memory-queue';
import { wirePorts } from '#lib/app/ports';
import { transact } from '#lib/db/transactions';
import { systemClock } from '#lib/kernel/clock';
import { type RequestContext, requestContext } from '#lib/kernel/context';
import type { TaskChanges } from '#lib/tasks/task-changes';
import { createTask } from '#lib/tasks/task-create';
import { ledgerWrites } from '#lib/tokens/ledger';
import { newUser } from '#tests/support/identity';

/**
 * Data for the search benchmarks, seeded through the domain's create functions (the HTTP routes would
 * stop creation at 30 a minute) as a new organization's owner, with text drawn from a fixed vocabulary
 * so that every run seeds the same. Import it after benchTable(), as the service's modules.
 *
 * @example
 * const { owner, ctx } = await benchOwner();
 * const seedTo = taskSeeder(ctx, (index) => ({ title: `${sentence(4)} ${index}`, assignee: `agent-${index % 20}` }));
 * await seedTo(1000);
 */

/** A new organization's owner, and a request context as them (an admin) whose queue sends nothing. */
export async function benchOwner() {
  const queue = memoryQueue({ consumers: {}, holdUntilConnected: true });
  const owner = await newUser('bench');
  const ctx = requestContext({
    traceId: 'bench',
    ports: wirePorts({ clock: systemClock, queue, email: { send: async () => undefined } }),
    baseUrl: 'http://localhost',
    principal: {
      method: 'jwt' as const,
      orgId: owner.orgId,
      capability: 'admin' as const,
      userId: owner.id,
      isInstanceAdmin: false,
      scopes: [],
      organization: { id: owner.orgId, name: 'bench', slug: 'bench' },
    },
  });
  return { owner, ctx };
}

// A fixed pseudo-random sequence (a linear congruential generator), so that every run draws the same words.
let seed = 42;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const syllables = ['ka', 'lo', 'mi', 'ten', 'sor', 'vi', 'dra', 'pel', 'qu', 'ix', 'ru', 'zen', 'bo', 'fa'];

/** A deterministic vocabulary: 2,000 made-up words, drawn with a skew so that some are common. */
export const vocabulary = Array.from({ length: 2000 }, (_, index) => {
  let word = '';
  for (let n = index + 1; n > 0; n = Math.floor(n / syllables.length)) word += syllables[n % syllables.length];
  return word;
});

/** A word that many records hold, and one that few do. */
export const common = vocabulary[3] as string;
export const rare = vocabulary[1500] as string;

const pickWord = () => vocabulary[Math.floor(vocabulary.length * random() ** 2)] as string;

/** `length` words drawn from the vocabulary, the next ones of the fixed sequence. */
export const sentence = (length: number) => Array.from({ length }, pickWord).join(' ');

/**
 * A function that grows the organization to `count` tasks, eight created at a time, each with the fields
 * `fieldsOf(index)` gives, and prints how long that took.
 */
export function taskSeeder(ctx: RequestContext, fieldsOf: (index: number) => TaskChanges & { title: string }) {
  let seeded = 0;
  return async function seedTo(count: number): Promise<void> {
    const started = performance.now();
    const from = seeded;
    while (seeded < count) {
      const batch = Array.from({ length: Math.min(8, count - seeded) }, (_, offset) => seeded + offset);
      seeded += batch.length;
      await Promise.all(batch.map((index) => createTask(ctx, fieldsOf(index))));
    }
    const seconds = (performance.now() - started) / 1000;
    const rate = ((count - from) / seconds).toFixed(0);
    console.log(`seeded ${count - from} tasks in ${seconds.toFixed(1)} s (${rate}/s)`);
  };
}

/** Grants an organization tokens outside billing, so that no run of a bench is refused for its balance. */
export async function grantTokens(orgId: string, amount: number): Promise<void> {
  await transact(
    ledgerWrites({ orgId, type: 'admin_grant', amount, action: 'bench', actor: 'system', now: new Date() }).writes,
  );
}
