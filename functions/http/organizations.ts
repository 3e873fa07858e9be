import { groupHandler, route } from '#lib/http/group-handler';
import { created, deleted, listOf } from '#lib/http/results';
import * as Organizations from '#lib/identity/organization-admin';
import {
  acceptInvite,
  addMember,
  createInvite,
  createOrganization,
  deleteOrganization,
  getOrganization,
  listInvites,
  listMembers,
  listOrganizations,
  removeMember,
  updateMember,
  updateOrganization,
} from '#lib/routes/organizations';

const page = <T>(result: { items: T[]; total: number }, query: { limit: number; offset: number }) =>
  listOf(result.items, { total: result.total, limit: query.limit, offset: query.offset });

export const organizationRoutes = [
  route(listOrganizations, async ({ query, ctx }) =>
    page(await Organizations.listOrganizations(ctx, query), query),
  ),
  route(createOrganization, async ({ body, ctx }) =>
    created(await Organizations.createOrganization(ctx, body)),
  ),
  route(getOrganization, async ({ params, ctx }) => Organizations.getOrganization(ctx, params.id)),
  route(updateOrganization, async ({ params, body, ctx }) =>
    Organizations.updateOrganization(ctx, params.id, body),
  ),
  route(deleteOrganization, async ({ params, ctx }) =>
    deleted(await Organizations.deleteOrganization(ctx, params.id)),
  ),
  route(listMembers, async ({ params, query, ctx }) =>
    page(await Organizations.listMembers(ctx, params.id, query), query),
  ),
  route(addMember, async ({ params, body, ctx }) =>
    created(await Organizations.addMember(ctx, params.id, { userId: body.user_id, role: body.role })),
  ),
  route(updateMember, async ({ params, body, ctx }) =>
    Organizations.changeMemberRole(ctx, params.id, params.userId, body.role),
  ),
  route(removeMember, async ({ params, ctx }) =>
    deleted(await Organizations.removeMember(ctx, params.id, params.userId)),
  ),
  route(listInvites, async ({ params, query, ctx }) =>
    page(await Organizations.listInvites(ctx, params.id, query), query),
  ),
  route(createInvite, async ({ params, body, ctx }) =>
    created(await Organizations.createInvite(ctx, params.id, body)),
  ),
  route(acceptInvite, async ({ params, ctx }) => Organizations.acceptInvite(ctx, params.token)),
];

export const handler = groupHandler('organizations', organizationRoutes);
