import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, type Migration, runPendingMigrations } from '#infra/migrations/pending';
import { db, TABLE } from '#lib/db/client';

/** A migration that counts its runs and fails while `failing` holds. */
function counted(id: string, options: { failing?: () => boolean } = {}) {
  const runs: number[] = [];
  const migration: Migration = {
    id,
    run: async () => {
      runs.push(runs.length + 1);
      if (options.failing?.()) throw new Error('the table said no');
      return `${id} moved 3 items`;
    },
  };
  return { migration, runs };
}

describe('migrations at start', () => {
  it('runs each pending migration once and records it, so that the next start skips it', async () => {
    // Arrange
    const first = counted(`first-${Date.now()}`);
    const second = counted(`second-${Date.now()}`);
    const said: string[] = [];

    // Act
    const ran = await runPendingMigrations({
      migrations: [first.migration, second.migration],
      say: (line) => said.push(line),
    });
    const again = await runPendingMigrations({
      migrations: [first.migration, second.migration],
      say: (line) => said.push(line),
    });

    // Assess
    expect(ran).toEqual([first.migration.id, second.migration.id]);
    expect(again).toEqual([]);
    expect([first.runs, second.runs]).toEqual([[1], [1]]);
    expect(said).toEqual([
      `Migration ${first.migration.id}: ${first.migration.id} moved 3 items`,
      `Migration ${second.migration.id}: ${second.migration.id} moved 3 items`,
    ]);
    const record = await db.send(
      new GetCommand({ TableName: TABLE, Key: { pk: 'MIGRATION', sk: first.migration.id } }),
    );
    expect(record.Item).toMatchObject({ result: `${first.migration.id} moved 3 items`, ran_at: expect.any(String) });
  });

  it('leaves a failed migration unrecorded for the next start, in one line, and still runs the others', async () => {
    // Arrange
    let down = true;
    const flaky = counted(`flaky-${Date.now()}`, { failing: () => down });
    const other = counted(`other-${Date.now()}`);
    const said: string[] = [];

    // Act
    const firstStart = await runPendingMigrations({
      migrations: [flaky.migration, other.migration],
      say: (line) => said.push(line),
    });
    down = false;
    const nextStart = await runPendingMigrations({
      migrations: [flaky.migration, other.migration],
      say: (line) => said.push(line),
    });

    // Assess
    expect(firstStart).toEqual([other.migration.id]);
    expect(nextStart).toEqual([flaky.migration.id]);
    expect(flaky.runs).toEqual([1, 2]);
    expect(said[0]).toBe(
      `Migration ${flaky.migration.id} failed (the table said no); ` +
        'the service runs without it and tries again at the next start.',
    );
  });

  it('records every migration without running it on a table this start created', async () => {
    // Arrange
    const fresh = counted(`fresh-${Date.now()}`);

    // Act
    const ran = await runPendingMigrations({ migrations: [fresh.migration], say: () => {}, newTable: true });
    const later = await runPendingMigrations({ migrations: [fresh.migration], say: () => {} });

    // Assess
    expect([ran, later, fresh.runs]).toEqual([[], [], []]);
  });

  it('names every migration once', () => {
    const ids = MIGRATIONS.map((migration) => migration.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
