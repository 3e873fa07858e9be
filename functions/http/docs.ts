import { DOCS_CSP, docsAsset, docsPage } from '#lib/docs/swagger-ui';
import { NotFoundError } from '#lib/errors';
import { groupHandler, route } from '#lib/http/group-handler';
import { rawResponse } from '#lib/http/results';
import { getDocsAsset, getDocsPage, getOpenApiDocument } from '#lib/routes/docs';

/**
 * Built at the first request for it, from the registry imported then: every route's schemas and the
 * document builder are a chunk of their own, which a cold start that serves the page or an asset never
 * loads.
 */
let document: Promise<string> | undefined;

async function openApiDocument(): Promise<string> {
  const [{ buildOpenApiDocument }, { allRoutes }] = await Promise.all([
    import('#lib/openapi/document'),
    import('#lib/routes/index'),
  ]);
  return JSON.stringify(buildOpenApiDocument(allRoutes));
}

export const handler = groupHandler('docs', [
  route(getOpenApiDocument, async () => {
    document ??= openApiDocument().catch((error: unknown) => {
      document = undefined;
      throw error;
    });
    return rawResponse({ contentType: 'application/json; charset=utf-8', body: await document });
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
