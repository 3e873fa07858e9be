import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Swagger UI served by the docs function itself (no CDN): the page, its script and stylesheet from the
 * swagger-ui-dist package, and a small initializer kept in its own file so the page's
 * Content-Security-Policy needs no inline script.
 */

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

// A Map, not an object: an asset name from the path (`__proto__`, `toString`) must not reach Object.prototype.
const DIST_FILES = new Map<string, { file: string; type: string }>(
  Object.entries({
    'swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
    'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
    'favicon-32x32.png': { file: 'favicon-32x32.png', type: 'image/png' },
  }),
);

export const INITIALIZER = `window.addEventListener('load', function () {
  var base = window.location.pathname.replace(/\\/docs\\/?$/, '');
  window.ui = SwaggerUIBundle({
    url: base + '/docs/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    tryItOutEnabled: false,
  });
});
`;

/** The page, its asset links absolute under `base` (the path before `/docs`: `/api` or `/api/v1`). */
export const docsPage = (base: string): string => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Agent Operations Service API</title>
  <link rel="stylesheet" href="${base}/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="${base}/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${base}/docs/swagger-ui-bundle.js"></script>
  <script src="${base}/docs/init.js"></script>
</body>
</html>
`;

export interface Asset {
  type: string;
  body: Buffer;
}

const cache = new Map<string, Asset>();

/** The package's folder, found without loading its 1.4 MB bundle as a module. */
const distDir = (): string => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The named asset, or undefined for any name that is not one of the page's own files. */
export async function docsAsset(name: string): Promise<Asset | undefined> {
  if (name === 'init.js') return { type: 'text/javascript; charset=utf-8', body: Buffer.from(INITIALIZER) };
  const entry = DIST_FILES.get(name);
  if (!entry) return undefined;
  let asset = cache.get(name);
  if (!asset) {
    asset = { type: entry.type, body: await readFile(join(distDir(), entry.file)) };
    cache.set(name, asset);
  }
  return asset;
}
