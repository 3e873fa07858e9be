/**
 * The operations behind the `/teams` routes, gathered for functions/http/teams.ts, which binds them as
 * one namespace. Each lives with its own concern: the teams themselves, their members, and invites.
 */

export { acceptTeamInvite, createTeamInvite, listTeamInvites } from '#lib/identity/team-invites';
export {
  createTeam,
  deleteTeam,
  getTeamWithMembers,
  listTeams,
  updateTeam,
} from '#lib/identity/team-lifecycle';
export { addTeamMember, listTeamMembers } from '#lib/identity/team-members';
