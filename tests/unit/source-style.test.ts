import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The two rules of style.md the formatter cannot keep: it never breaks a string, so a long description
 * passes `biome check` however wide it is; and the named zod import is valid code that bundles every
 * zod locale.
 */
const FOLDERS = ['functions', 'lib', 'infra', 'tests', 'bench'];
const MAX_LINE = 120;

const sourceFiles = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });

const files = FOLDERS.flatMap(sourceFiles).map((path) => ({ path, lines: readFileSync(path, 'utf8').split('\n') }));

describe('source style', () => {
  it('finds the TypeScript sources', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it(`has no line over ${MAX_LINE} characters (split long strings into concatenated pieces)`, () => {
    const long = files.flatMap(({ path, lines }) =>
      lines.flatMap((line, index) => {
        const length = [...line].length;
        return length > MAX_LINE ? [`${path}:${index + 1} (${length} characters)`] : [];
      }),
    );
    expect(long).toEqual([]);
  });

  it("imports zod as a namespace (import * as z from 'zod'), never by name", () => {
    const named = files.flatMap(({ path, lines }) =>
      lines.flatMap((line, index) =>
        /^import\s+(type\s+)?\{[^}]*\}\s+from\s+['"]zod['"]/.test(line) ? [`${path}:${index + 1}`] : [],
      ),
    );
    expect(named).toEqual([]);
  });
});
