import { ForbiddenError, NotFoundError } from '#lib/errors';
import { hasOrgRole } from '#lib/identity/access';
import { getTeamItem, getTeamMember, type TeamItem } from '#lib/identity/team-records';
import type { Principal, RequestContext } from '#lib/kernel/context';

/**
 * Who may act on a team. Teams live under the organization the request acts in, so a team of another
 * organization is simply not found.
 */
export const teamNotFound = () => new NotFoundError('Team not found');

/** The team, or 404 when it does not exist in this organization or its deletion has begun. */
export async function getLiveTeam(orgId: string, teamId: number): Promise<TeamItem> {
  const team = await getTeamItem(orgId, teamId);
  if (!team || team.deleting_at) throw teamNotFound();
  return team;
}

/**
 * Changing a team (its fields, members, invites) is for the team's owners and admins and for admins of
 * the organization. Handing out the owner role is kept to team owners and organization admins, so that
 * a team admin cannot raise someone (or a second account) above themselves.
 */
export async function requireTeamManager(
  ctx: RequestContext,
  principal: Principal,
  team: TeamItem,
  grantsOwner = false,
): Promise<void> {
  if (hasOrgRole(ctx, 'admin')) return;
  const own =
    principal.userId === undefined ? undefined : await getTeamMember(principal.orgId, team.id, principal.userId);
  if (grantsOwner && own?.role !== 'owner') {
    throw new ForbiddenError('Granting the owner role needs the team owner role or the organization admin role');
  }
  if (own?.role !== 'owner' && own?.role !== 'admin') {
    throw new ForbiddenError('This needs the team owner or admin role, or the organization admin role');
  }
}
