import { DOCS_CSP, docsAsset, docsPage } from '#lib/docs/swagger-ui';
import { NotFoundError } from '#lib/errors';
import { groupHandler, route } from '#lib/http/group-handler';
import { rawResponse } from '#lib/http/results';
import { buildOpenApiDocument } from '#lib/openapi/document';
import { getDocsAsset, getDocsPage, getOpenApiDocument } from '#lib/routes/docs';
import { allRoutes } from '#lib/routes/index';

// Built on first request, not at import: a cold start that serves an asset does not pay for it.
let document: string | undefined;

export const handler = groupHandler('docs', [
  route(getOpenApiDocument, async () => {
    document ??= JSON.stringify(buildOpenApiDocument(allRoutes));
    return rawResponse({ contentType: 'application/json; charset=utf-8', body: document });
  }),
  route(getDocsPage, async ({ path }) => {
    const base = path.slice(0, path.lastIndexOf('/docs'));
    return rawResponse({
      contentType: 'text/html; charset=utf-8',
      body: docsPage(base),
      headers: { 'Content-Security-Policy': DOCS_CSP },
    });
  }),
  route(getDocsAsset, async ({ params }) => {
    const asset = await docsAsset(params.asset);
    if (!asset) throw new NotFoundError(`No documentation asset named ${params.asset}`);
    const binary = asset.type.startsWith('image/');
    return rawResponse({
      contentType: asset.type,
      body: binary ? asset.body.toString('base64') : asset.body.toString('utf8'),
      isBase64Encoded: binary,
      headers: { 'Cache-Control': 'public, max-age=3600', 'Content-Security-Policy': DOCS_CSP },
    });
  }),
]);
