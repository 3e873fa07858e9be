import * as z from 'zod';
import { defineRoute } from '#lib/http/route';

/** The API's own documentation, answered by the `docs` function (outside the envelope). */

const group = 'docs';
const tags = ['Documentation'];

export const getOpenApiDocument = defineRoute({
  rateLimited: false,
  group,
  tags,
  method: 'GET',
  path: '/docs/openapi.json',
  auth: 'none',
  summary: 'The OpenAPI 3.0 document of this API',
  envelope: 'raw',
  contentType: 'application/json',
  response: z.object({ openapi: z.string() }).passthrough(),
});

export const getDocsPage = defineRoute({
  rateLimited: false,
  group,
  tags,
  method: 'GET',
  path: '/docs',
  auth: 'none',
  summary: 'Interactive documentation (Swagger UI)',
  envelope: 'raw',
  contentType: 'text/html',
});

export const getDocsAsset = defineRoute({
  rateLimited: false,
  group,
  tags,
  method: 'GET',
  path: '/docs/{asset}',
  auth: 'none',
  summary: 'A static asset of the documentation page',
  envelope: 'raw',
  contentType: ['text/css', 'text/javascript', 'image/png'],
  params: z.object({ asset: z.string().max(64) }),
  errors: [404],
});
