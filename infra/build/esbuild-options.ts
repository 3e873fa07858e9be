import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type { BuildOptions, Plugin } from 'esbuild';
import { parse } from 'yaml';
import { cloudFormationTags } from '#infra/local/yaml-tags';

/**
 * The esbuild options serverless-esbuild builds each function with, read from serverless.yml's
 * `custom.esbuild` the way the plugin reads them (its own keys removed, `exclude` made external, the
 * `plugins` file loaded), so that the benchmarks bundle exactly what `npm run package` zips.
 */

interface ServerlessYml {
  custom: { esbuild: Record<string, unknown> };
  functions: Record<string, { environment?: Record<string, unknown> }>;
}

export const serverlessYml = (): ServerlessYml =>
  parse(readFileSync('serverless.yml', 'utf8'), { customTags: cloudFormationTags }) as ServerlessYml;

// The plugin's own keys, which serverless-esbuild removes before it calls esbuild (its bundle.ts).
const PLUGIN_KEYS = [
  'concurrency',
  'zipConcurrency',
  'exclude',
  'nativeZip',
  'packager',
  'packagePath',
  'watch',
  'keepOutputDirectory',
  'packagerOptions',
  'installExtraArgs',
  'outputFileExtension',
  'outputBuildFolder',
  'outputWorkFolder',
  'nodeExternals',
  'skipBuild',
  'skipRebuild',
  'skipBuildExcludeFns',
  'stripEntryResolveExtensions',
  'disposeContext',
];

export interface FunctionBuild {
  /** What serverless-esbuild passes to esbuild besides `entryPoints` and `outdir`. */
  options: BuildOptions;
  /** The bundle's file extension (`.mjs`). */
  extension: string;
}

export function functionBuild(): FunctionBuild {
  const custom = serverlessYml().custom.esbuild;
  const extension = (custom.outputFileExtension as string | undefined) ?? '.js';
  const exclude = (custom.exclude as string[] | undefined) ?? ['aws-sdk'];
  const pluginsFile = custom.plugins as string | undefined;
  // Called without a serverless instance: a benchmark's build keeps its maps where esbuild writes them.
  const plugins = pluginsFile ? (createRequire(import.meta.url)(resolve(pluginsFile)) as () => Plugin[])() : [];
  const options: BuildOptions = {
    ...Object.fromEntries(Object.entries(custom).filter(([key]) => !PLUGIN_KEYS.includes(key))),
    external: [...((custom.external as string[] | undefined) ?? []), ...(exclude.includes('*') ? [] : exclude)],
    ...(extension === '.js' ? {} : { outExtension: { '.js': extension } }),
    plugins,
  };
  return { options, extension };
}
