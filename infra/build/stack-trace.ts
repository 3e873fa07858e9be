import { existsSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Maps the frames of a stack trace logged by a deployed function back to the TypeScript they were built
 * from, with the source maps packaging keeps beside the zips (infra/build/esbuild-plugins.cjs). The
 * functions run without `--enable-source-maps`, so their logs name places in the minified bundles:
 * `file:///var/task/functions/http/tasks.mjs:1:52345` becomes `lib/tasks/task-create.ts:88:11`.
 */

/** A bundle frame as Lambda logs it: `/var/task/functions/...mjs:line:column` (maybe `file://`). */
const FRAME = /(?:file:\/\/)?(?:\/var\/task\/)?((?:functions)\/[\w./-]+\.mjs):(\d+):(\d+)/g;

/**
 * `text` with every bundle frame's place replaced by its original place; frames without a map, or
 * outside any mapping, are left as they are (the minified function names stay).
 * A JSON log line's `\n` escapes are read as line breaks.
 */
export function mapStackTrace(text: string, mapsDir: string): string {
  const maps = new Map<string, { map: SourceMap; dir: string } | undefined>();
  const mapOf = (bundle: string) => {
    if (!maps.has(bundle)) {
      const file = join(mapsDir, `${bundle}.map`);
      maps.set(
        bundle,
        existsSync(file)
          ? { map: new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as SourceMapPayload), dir: dirname(file) }
          : undefined,
      );
    }
    return maps.get(bundle);
  };
  return text.replace(/\\n/g, '\n').replace(FRAME, (frame, bundle: string, line: string, column: string) => {
    const found = mapOf(bundle);
    if (!found) return frame;
    const entry = found.map.findEntry(Number(line) - 1, Number(column) - 1);
    if (!('originalSource' in entry)) return frame;
    const source = relative(process.cwd(), resolve(found.dir, entry.originalSource));
    return `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}
