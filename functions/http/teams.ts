import { groupHandler, route } from '#lib/http/group-handler';
import { created, deleted, listOf } from '#lib/http/results';
import * as Teams from '#lib/identity/teams';
import {
  acceptTeamInvite,
  addTeamMember,
  createTeam,
  createTeamInvite,
  deleteTeam,
  getTeam,
  listTeamInvites,
  listTeamMembers,
  listTeams,
  updateTeam,
} from '#lib/routes/teams';

export const handler = groupHandler('teams', [
  route(listTeams, async ({ query, ctx }) => {
    const page = await Teams.listTeams(ctx, query);
    return listOf(page.items, { total: page.total, limit: query.limit, offset: query.offset });
  }),
  route(createTeam, async ({ body, ctx }) => created(await Teams.createTeam(ctx, body))),
  route(getTeam, async ({ params, ctx }) => Teams.getTeamWithMembers(ctx, params.id)),
  route(updateTeam, async ({ params, body, ctx }) => Teams.updateTeam(ctx, params.id, body)),
  route(deleteTeam, async ({ params, ctx }) => deleted(await Teams.deleteTeam(ctx, params.id))),
  route(listTeamMembers, async ({ params, query, ctx }) => {
    const page = await Teams.listTeamMembers(ctx, params.id, query);
    return listOf(page.items, { total: page.total, limit: query.limit, offset: query.offset });
  }),
  route(addTeamMember, async ({ params, body, ctx }) =>
    created(await Teams.addTeamMember(ctx, params.id, body)),
  ),
  route(listTeamInvites, async ({ params, query, ctx }) => {
    const page = await Teams.listTeamInvites(ctx, params.id, query);
    return listOf(page.items, { total: page.total, limit: query.limit, offset: query.offset });
  }),
  route(createTeamInvite, async ({ params, body, ctx }) =>
    created(await Teams.createTeamInvite(ctx, params.id, body)),
  ),
  route(acceptTeamInvite, async ({ params, ctx }) => Teams.acceptTeamInvite(ctx, params.token)),
]);
