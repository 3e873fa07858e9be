import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { buildOpenApiDocument } from '#lib/openapi/document';
import { allRoutes } from '#lib/routes/index';

/**
 * Writes the OpenAPI document the docs function serves to a file, so that tools outside the service (the
 * linter and the client generator `npm run openapi:check` runs) judge exactly what clients download.
 * Usage: `node --import tsx infra/openapi/write.ts <file>`.
 */

const target = process.argv[2];
if (!target) {
  console.error('Usage: node --import tsx infra/openapi/write.ts <file>');
  process.exit(2);
}
const file = resolve(target);
await mkdir(dirname(file), { recursive: true });
await writeFile(file, `${JSON.stringify(buildOpenApiDocument(allRoutes), null, 2)}\n`);
console.log(`Wrote ${file}`);
