import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backupFilename, filenameOrgId } from '#lib/backups/backup-keys';
import { PARTITION_SUFFIXES, restoreWriteOf } from '#lib/backups/backup-partitions';

/** Where an organization's items live, as backups see it, and what a restore may write. */
function libSources(dir = 'lib'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? libSources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('the partitions of an organization', () => {
  it('places every partition key that lib builds beside `T#<org>`: exported, the backups’ own, or index only', () => {
    // Prepare
    const placed = new Set([
      ...PARTITION_SUFFIXES.exported,
      ...PARTITION_SUFFIXES.notExported,
      ...PARTITION_SUFFIXES.indexOnly,
    ]);
    const found = new Map<string, string>();
    for (const file of libSources()) {
      for (const match of readFileSync(file, 'utf8').matchAll(/\$\{tenantPk\([^)]*\)\}(#[A-Z][A-Z0-9_]*)/g)) {
        found.set(match[1] as string, file);
      }
    }

    // Act
    const unplaced = [...found].filter(([suffix]) => !placed.has(suffix));

    // Assess
    expect(found.size).toBeGreaterThanOrEqual(8);
    expect(unplaced).toEqual([]);
  });

  it.each([
    [{ pk: 'T#org_1', sk: 'TASK#000000000001' }, 'put'],
    [{ pk: 'T#org_1', sk: 'ORG' }, 'keep-identity'],
    [{ pk: 'T#org_1', sk: 'MEMBER#000000000007' }, 'keep-identity'],
    [{ pk: 'T#org_1#QUEUE#alice', sk: 'COUNT#0' }, 'put'],
    [{ pk: 'T#org_1#ACTIVITY#user', sk: '2025-03-01T00:00:00.000Z#x' }, 'put'],
    [{ pk: 'T#org_1#ACTIVITYCOUNT', sk: 'HOUR#2025-03-01T00#0' }, 'add-counts'],
    [{ pk: 'T#org_1#METRICS', sk: 'TOTALS#0' }, 'put'],
    [{ pk: 'APIKEYHASH#abc', sk: 'APIKEYHASH', org_id: 'org_1' }, 'pointer'],
    [{ pk: 'APIKEYHASH#abc', sk: 'APIKEYHASH', org_id: 'org_2' }, undefined],
    [{ pk: 'T#org_1', sk: 'TASKWORD#fuel#000000000001' }, 'derived'],
    [{ pk: 'T#org_1#TASKTERMS', sk: 'fuel#000000000001' }, undefined],
    [{ pk: 'T#org_1#BACKUPS', sk: 'STATS' }, undefined],
    [{ pk: 'T#org_1#UNKNOWN', sk: 'X' }, undefined],
    [{ pk: 'T#org_12', sk: 'TASK#000000000001' }, undefined],
    [{ pk: 'T#org_2', sk: 'TASK#000000000001' }, undefined],
    [{ pk: 'USER#1', sk: 'USER', org_id: 'org_1' }, undefined],
    [{ pk: 'UNIQUE#org-slug#acme', sk: 'UNIQUE', owner: 'org_1' }, undefined],
  ])('restores %j of org_1 as %s', (item, expected) => {
    // Act
    const how = restoreWriteOf('org_1', item);

    // Assess
    expect(how).toBe(expected);
  });
});

describe('backup file names', () => {
  it('name the organization and the time to the millisecond, and only valid names name an organization', () => {
    // Act
    const name = backupFilename('org_1aB', new Date('2025-03-01T10:00:00.123Z'));

    // Assess
    expect(name).toBe('backup-org_1aB-20250301T100000123Z.json.gz');
    expect(filenameOrgId(name)).toBe('org_1aB');
    for (const bad of [`${name}/x`, `../${name}`, `${name}\u0000`, name.replace('.gz', ''), ` ${name}`, '']) {
      expect(filenameOrgId(bad)).toBeUndefined();
    }
    expect(() => backupFilename('org-with-hyphen', new Date())).toThrow();
  });
});
