import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { mapStackTrace } from '#infra/build/stack-trace';

/** A minified bundle with its external map, laid out as the package keeps them (`functions/...`). */
const root = mkdtempSync(join(tmpdir(), 'stack-trace-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function failingBundle(): Promise<string> {
  mkdirSync(join(root, 'src'));
  writeFileSync(
    join(root, 'src', 'probe.ts'),
    [
      'export function handler(input: { name?: string }): string {',
      '  const name = input.name ?? "nobody";',
      '  if (name === "nobody") throw new Error("no name given");',
      '  return name;',
      '}',
      '',
    ].join('\n'),
  );
  await build({
    entryPoints: [join(root, 'src', 'probe.ts')],
    outdir: join(root, 'functions', 'http'),
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    outExtension: { '.js': '.mjs' },
    sourcemap: 'external',
    logLevel: 'silent',
  });
  const bundle = (await import(pathToFileURL(join(root, 'functions', 'http', 'probe.mjs')).href)) as {
    handler: (input: object) => string;
  };
  try {
    bundle.handler({});
  } catch (error) {
    return (error as Error).stack ?? '';
  }
  throw new Error('the probe did not fail');
}

describe('mapStackTrace', () => {
  it('maps a minified bundle frame to the line of TypeScript that threw', async () => {
    // Prepare
    const stack = await failingBundle();

    // Act
    const mapped = mapStackTrace(stack, root);

    // Assess
    expect(stack).toMatch(/functions\/http\/probe\.mjs:1:\d+/);
    expect(mapped).toMatch(/src\/probe\.ts:3:\d+/);
    expect(mapped).not.toMatch(/probe\.mjs:/);
  });

  it('reads the escaped line breaks of a JSON log line and leaves frames without a map as they were', () => {
    // Prepare
    const line = JSON.stringify({ stack: 'Error: x\n    at f (file:///var/task/functions/http/gone.mjs:1:99)' });

    // Act
    const mapped = mapStackTrace(line, root);

    // Assess
    expect(mapped).toContain('\n    at f (file:///var/task/functions/http/gone.mjs:1:99)');
  });
});
