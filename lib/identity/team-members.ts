import type { Page, PageRequest } from '#lib/db/paging';
import { transact } from '#lib/db/transactions';
import { ConflictError, NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import { getMembership } from '#lib/identity/memberships';
import type { TeamRole } from '#lib/identity/roles';
import { getLiveTeam, requireTeamManager, teamNotFound } from '#lib/identity/team-access';
import {
  listMembersOfTeam,
  type TeamMember,
  type TeamMemberItem,
  teamJoinWrites,
  teamKeys,
  toTeamMember,
} from '#lib/identity/team-records';
import { getUserItem, getUsersByIds } from '#lib/identity/users';
import type { RequestContext } from '#lib/kernel/context';

/** The members of a team as the `/teams/{id}/members` routes list and add them. */

export const alreadyTeamMember = () => new ConflictError('The user is already a member of this team');
const userNotInOrganization = () => new NotFoundError('User not found in this organization');

/** Team members with their users' names; a user erased since joining shows as nulls. */
export async function membersWithUsers(items: TeamMemberItem[]): Promise<TeamMember[]> {
  const users = await getUsersByIds([...new Set(items.map((item) => item.user_id))]);
  const byId = new Map(users.map((user) => [user.id, user]));
  return items.map((item) => toTeamMember(item, byId.get(item.user_id)));
}

/** GET /teams/{id}/members. */
export async function listTeamMembers(
  ctx: RequestContext,
  teamId: number,
  page: PageRequest,
): Promise<Page<TeamMember>> {
  const principal = requirePrincipal(ctx);
  await getLiveTeam(principal.orgId, teamId);
  const result = await listMembersOfTeam({ orgId: principal.orgId, teamId, ...page });
  return { items: await membersWithUsers(result.items), total: result.total };
}

export interface NewTeamMember {
  user_id: number;
  role: TeamRole;
}

/**
 * POST /teams/{id}/members: the user must belong to the organization. The membership, the member and
 * the team's member_count change in one transaction, so the count never drifts from the members.
 */
export async function addTeamMember(ctx: RequestContext, teamId: number, input: NewTeamMember): Promise<TeamMember> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const team = await getLiveTeam(orgId, teamId);
  await requireTeamManager(ctx, principal, team, input.role === 'owner');
  const [user, membership] = await Promise.all([getUserItem(input.user_id), getMembership(orgId, input.user_id)]);
  if (!user || !membership) throw userNotInOrganization();
  const member: TeamMemberItem = {
    ...teamKeys.member(orgId, teamId, input.user_id),
    org_id: orgId,
    team_id: teamId,
    user_id: input.user_id,
    role: input.role,
    joined_at: ctx.ports.clock.now().toISOString(),
  };
  await transact(teamJoinWrites(member), {
    'not-member': userNotInOrganization,
    'already-team-member': alreadyTeamMember,
    'team-missing': teamNotFound,
  });
  return toTeamMember(member, user);
}
