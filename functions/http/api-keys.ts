import { groupHandler, type RouteBinding, route } from '#lib/http/group-handler';
import * as ApiKeys from '#lib/identity/api-keys';
import {
  createApiKey,
  DEFAULT_GRACE_HOURS,
  deleteApiKey,
  getApiKey,
  listApiKeys,
  listApiKeyUsage,
  revokeApiKey,
  rollApiKey,
  rotateApiKey,
  updateApiKey,
} from '#lib/routes/api-keys';

/** Exported so that tests can serve the same routes with a clock they move (rotation grace, expiry). */
export const bindings: RouteBinding[] = [
  route(listApiKeys, async ({ params, query, ctx }) => await ApiKeys.listApiKeys(ctx, params.orgId, query)),
  route(createApiKey, async ({ params, body, ctx }) => await ApiKeys.createApiKey(ctx, params.orgId, body)),
  route(getApiKey, async ({ params, ctx }) => ApiKeys.getApiKey(ctx, params.orgId, params.keyId)),
  route(updateApiKey, async ({ params, body, ctx }) => ApiKeys.updateApiKey(ctx, params.orgId, params.keyId, body)),
  route(deleteApiKey, async ({ params, ctx }) => await ApiKeys.deleteApiKey(ctx, params.orgId, params.keyId)),
  route(revokeApiKey, async ({ params, ctx }) => ApiKeys.revokeApiKey(ctx, params.orgId, params.keyId)),
  route(rotateApiKey, async ({ params, body, ctx }) =>
    ApiKeys.replaceApiKeySecret(ctx, params.orgId, params.keyId, body?.grace_hours ?? DEFAULT_GRACE_HOURS),
  ),
  route(rollApiKey, async ({ params, ctx }) => ApiKeys.replaceApiKeySecret(ctx, params.orgId, params.keyId, 0)),
  route(
    listApiKeyUsage,
    async ({ params, query, ctx }) => await ApiKeys.listApiKeyUsage(ctx, params.orgId, params.keyId, query),
  ),
];

export const handler = groupHandler('api-keys', bindings);
