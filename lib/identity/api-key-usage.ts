import type { Page, PageRequest } from '#lib/db/paging';
import { loadKey, requireKeyManager } from '#lib/identity/api-key-access';
import { type ApiKeyUse, listUsesOfApiKey } from '#lib/identity/api-key-records';
import type { RequestContext } from '#lib/kernel/context';

/** The key's usage records, newest first; records past their retention but not yet removed by TTL are left out. */
export async function listApiKeyUsage(
  ctx: RequestContext,
  orgId: string,
  keyId: string,
  page: PageRequest,
): Promise<Page<ApiKeyUse>> {
  await requireKeyManager(ctx, orgId);
  await loadKey(orgId, keyId);
  const result = await listUsesOfApiKey({ orgId, keyId, now: ctx.ports.clock.now(), ...page });
  return {
    items: result.items.map((use) => ({
      method: use.method,
      route: use.route,
      status: use.status,
      at: use.at,
    })),
    total: result.total,
  };
}
