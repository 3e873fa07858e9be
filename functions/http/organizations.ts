import { email } from '#lib/app/email';
import { groupHandler, route } from '#lib/http/group-handler';
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

export const organizationRoutes = [
  route(listOrganizations, async ({ query, ctx }) => await Organizations.listOrganizations(ctx, query)),
  route(createOrganization, async ({ body, ctx }) => await Organizations.createOrganization(ctx, body)),
  route(getOrganization, async ({ params, ctx }) => Organizations.getOrganization(ctx, params.id)),
  route(updateOrganization, async ({ params, body, ctx }) => Organizations.updateOrganization(ctx, params.id, body)),
  route(deleteOrganization, async ({ params, ctx }) => await Organizations.deleteOrganization(ctx, params.id)),
  route(listMembers, async ({ params, query, ctx }) => await Organizations.listMembers(ctx, params.id, query)),
  route(
    addMember,
    async ({ params, body, ctx }) =>
      await Organizations.addMember(ctx, params.id, { userId: body.user_id, role: body.role }),
  ),
  route(updateMember, async ({ params, body, ctx }) =>
    Organizations.changeMemberRole(ctx, params.id, params.userId, body.role),
  ),
  route(removeMember, async ({ params, ctx }) => await Organizations.removeMember(ctx, params.id, params.userId)),
  route(listInvites, async ({ params, query, ctx }) => await Organizations.listInvites(ctx, params.id, query)),
  route(createInvite, async ({ params, body, ctx }) => await Organizations.createInvite(ctx, params.id, body)),
  route(acceptInvite, async ({ params, ctx }) => Organizations.acceptInvite(ctx, params.token)),
];

export const handler = groupHandler('organizations', organizationRoutes, { ports: { email } });
