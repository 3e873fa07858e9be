import { email } from '#lib/app/email';
import { groupHandler, route } from '#lib/http/group-handler';
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

export const handler = groupHandler(
  'teams',
  [
    route(listTeams, async ({ query, ctx }) => await Teams.listTeams(ctx, query)),
    route(createTeam, async ({ body, ctx }) => await Teams.createTeam(ctx, body)),
    route(getTeam, async ({ params, ctx }) => Teams.getTeamWithMembers(ctx, params.id)),
    route(updateTeam, async ({ params, body, ctx }) => Teams.updateTeam(ctx, params.id, body)),
    route(deleteTeam, async ({ params, ctx }) => await Teams.deleteTeam(ctx, params.id)),
    route(listTeamMembers, async ({ params, query, ctx }) => await Teams.listTeamMembers(ctx, params.id, query)),
    route(addTeamMember, async ({ params, body, ctx }) => await Teams.addTeamMember(ctx, params.id, body)),
    route(listTeamInvites, async ({ params, query, ctx }) => await Teams.listTeamInvites(ctx, params.id, query)),
    route(createTeamInvite, async ({ params, body, ctx }) => await Teams.createTeamInvite(ctx, params.id, body)),
    route(acceptTeamInvite, async ({ params, ctx }) => Teams.acceptTeamInvite(ctx, params.token)),
  ],
  { ports: { email } },
);
