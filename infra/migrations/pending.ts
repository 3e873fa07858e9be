import { moveAllLegacyActivity } from '#lib/activity/activity-migration';
import type { TableKey } from '#lib/db/keys';
import { table } from '#lib/db/table';
import { moveAllLegacyApiKeyUses } from '#lib/identity/api-key-use-migration';
import { indexAllTasksWithoutTerms } from '#lib/tasks/search-migration';
import { moveAllLegacyLinks } from '#lib/tasks/task-blocks-migration';

/**
 * The data moves an upgrade may need, which `npm start` runs before it takes requests, so that an
 * installation upgraded in place needs no script: each at most once per table, recorded in an item of its
 * own once it has run. Each is also safe to run again and while the service runs, so a start that dies
 * halfway through one simply runs it again. A deployed table runs them with the scripts beside this file.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | migration done | `MIGRATION` | `<id>` | `ran_at`, `result` (one line) |
 */
export interface Migration {
  id: string;
  /** Moves the data; answers one line saying what it did. */
  run: () => Promise<string>;
}

export const MIGRATIONS: Migration[] = [
  {
    id: 'activity-partitions',
    run: async () => {
      const result = await moveAllLegacyActivity(new Date());
      return `${result.moved} activity entries moved (${result.organizations} organizations read)`;
    },
  },
  {
    id: 'task-search-terms',
    run: async () => {
      const result = await indexAllTasksWithoutTerms();
      const { indexed, legacyRemoved, organizations } = result;
      return `${indexed} tasks indexed, ${legacyRemoved} whole-word postings deleted (${organizations} organizations)`;
    },
  },
  {
    id: 'api-key-uses',
    run: async () => {
      const { moved, expired, organizations } = await moveAllLegacyApiKeyUses(new Date());
      return `${moved} API key uses moved, ${expired} past retention deleted (${organizations} organizations)`;
    },
  },
  {
    id: 'task-blocks',
    run: async () => {
      const { moved, dropped, organizations } = await moveAllLegacyLinks();
      return `${moved} dependent links moved onto their tasks, ${dropped} deleted (${organizations} organizations)`;
    },
  },
];

const migrationKey = (id: string): TableKey => ({ pk: 'MIGRATION', sk: id });

/**
 * Runs the migrations not yet recorded, in order, and answers the ids it ran. One that fails is reported
 * through `say` and left unrecorded, for the next start; the rest still run, since each stands alone. On a
 * table created by this start (`newTable`) there is nothing to move: each is recorded without running.
 */
export async function runPendingMigrations(
  options: { migrations?: Migration[]; say?: (line: string) => void; newTable?: boolean } = {},
): Promise<string[]> {
  const { migrations = MIGRATIONS, say = console.log, newTable = false } = options;
  const ran: string[] = [];
  for (const migration of migrations) {
    const { Item } = await table.get({ Key: migrationKey(migration.id), ConsistentRead: true });
    if (Item) continue;
    if (newTable) {
      const result = 'not needed: the table was new';
      await table.put({ Item: { ...migrationKey(migration.id), ran_at: new Date().toISOString(), result } });
      continue;
    }
    try {
      const result = await migration.run();
      await table.put({ Item: { ...migrationKey(migration.id), ran_at: new Date().toISOString(), result } });
      say(`Migration ${migration.id}: ${result}`);
      ran.push(migration.id);
    } catch (error) {
      say(
        `Migration ${migration.id} failed (${error instanceof Error ? error.message : String(error)}); ` +
          'the service runs without it and tries again at the next start.',
      );
    }
  }
  return ran;
}
