/**
 * The esbuild plugins of every function bundle: serverless.yml names this file in `custom.esbuild.plugins`,
 * and infra/build/esbuild-options.ts hands the same plugins to the benchmarks. serverless-esbuild loads it
 * with require() (hence CommonJS) and calls it with the serverless instance; the benchmarks call it with
 * none, and their builds keep their maps where esbuild writes them.
 */
const { mkdir, writeFile } = require('node:fs/promises');
const { basename, dirname, join, relative, resolve } = require('node:path');

/**
 * A function's lazily imported chunks go to a folder of their own beside its bundle,
 * `functions/http/tasks.chunks/`. serverless-esbuild zips every file of its build folder into a function's
 * zip except the files whose path starts with another function's bundle name and a dot (its bundle, its
 * map): named so, each function's chunks travel in its own zip and in no other.
 */
const chunksBesideEntry = {
  name: 'chunks-beside-entry',
  setup(build) {
    const entries = build.initialOptions.entryPoints;
    if (!Array.isArray(entries) || entries.length !== 1) return;
    const entry = typeof entries[0] === 'string' ? entries[0] : entries[0].in;
    build.initialOptions.chunkNames = `${basename(entry).replace(/\.[^.]+$/, '')}.chunks/[name]-[hash]`;
  },
};

/**
 * Node's `http` module is read through require(), not imported as an ES module. An ES import of a
 * built-in makes Node evaluate every export of it for the module namespace, and node:http's exports
 * include undici's WebSocket: about 20 ms of CPU at each cold start that imports it, where require()
 * costs 4 ms (node:https costs the same either way). Middy imports node:http for STATUS_CODES; the AWS
 * SDK imports it only on the way to plain-http endpoints. The bundle's banner defines `require`.
 */
const HTTP_MODULE = /^(node:)?http$/;
const httpThroughRequire = {
  name: 'http-through-require',
  setup(build) {
    build.onResolve({ filter: HTTP_MODULE }, (args) =>
      args.namespace === 'http-through-require'
        ? { path: args.path, external: true }
        : { path: 'node:http', namespace: 'http-through-require' },
    );
    build.onLoad({ filter: /.*/, namespace: 'http-through-require' }, () => ({
      contents: "module.exports = require('node:http');",
      loader: 'js',
    }));
  },
};

/**
 * The source maps of a packaged function go to `.serverless/sourcemaps/` (under the same paths as in the
 * zip: `functions/http/tasks.mjs.map`), not into the zip: serverless-esbuild zips every file of its
 * build folder. They come from the same build as the code, so they always describe what was packaged;
 * `npm run stack` maps a logged stack trace with them. The functions run without
 * `--enable-source-maps`: loading the maps would cost every cold start (README, "Cold start").
 */
const mapsBesidePackage = (mapsDir) => ({
  name: 'maps-beside-package',
  setup(build) {
    const options = build.initialOptions;
    const entries = options.entryPoints;
    if (options.sourcemap !== 'external' || !options.outdir || !Array.isArray(entries) || entries.length !== 1) return;
    const entry = typeof entries[0] === 'string' ? entries[0] : entries[0].in;
    // serverless-esbuild builds `functions/http/tasks.ts` into `<build folder>/functions/http`.
    const outdir = resolve(options.outdir);
    const buildFolder = outdir.endsWith(dirname(entry)) ? outdir.slice(0, -dirname(entry).length) : outdir;
    options.write = false;
    build.onEnd(async (result) => {
      for (const file of result.outputFiles ?? []) {
        if (!file.path.endsWith('.map')) {
          await mkdir(dirname(file.path), { recursive: true });
          await writeFile(file.path, file.contents);
          continue;
        }
        const target = join(mapsDir, relative(buildFolder, file.path));
        const map = JSON.parse(file.text);
        // Sources are named relative to the map: to where it is kept now.
        map.sources = map.sources.map((source) => relative(dirname(target), resolve(dirname(file.path), source)));
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, JSON.stringify(map));
      }
    });
  },
});

module.exports = (serverless) => [
  chunksBesideEntry,
  httpThroughRequire,
  ...(serverless ? [mapsBesidePackage(join(serverless.serviceDir, '.serverless', 'sourcemaps'))] : []),
];
