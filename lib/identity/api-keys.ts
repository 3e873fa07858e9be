/**
 * The operations behind the `/organizations/{orgId}/api-keys` routes, gathered for
 * functions/http/api-keys.ts, which binds them as one namespace: issuing keys, replacing their secrets
 * and reading their usage each live in their own module.
 */
export {
  createApiKey,
  deleteApiKey,
  getApiKey,
  listApiKeys,
  revokeApiKey,
  updateApiKey,
} from '#lib/identity/api-key-lifecycle';
export { replaceApiKeySecret } from '#lib/identity/api-key-rotation';
export { listApiKeyUsage } from '#lib/identity/api-key-usage';
