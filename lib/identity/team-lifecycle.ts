import type { Page, PageRequest } from '#lib/db/paging';
import { transact } from '#lib/db/transactions';
import { isConditionFailed } from '#lib/errors';
import { requireOrgRole, requirePrincipal, requireUser } from '#lib/identity/access';
import { getLiveTeam, requireTeamManager, teamNotFound } from '#lib/identity/team-access';
import { membersWithUsers } from '#lib/identity/team-members';
import {
  getTeamItem,
  listMembersOfTeam,
  listTeamsOfOrganization,
  markTeamDeleting,
  newTeamWrites,
  nextTeamId,
  type Team,
  type TeamChanges,
  type TeamItem,
  type TeamMember,
  type TeamMemberItem,
  teamContentKeys,
  teamDeletionWrite,
  teamKeys,
  toTeam,
  updateTeamFields,
} from '#lib/identity/team-records';
import type { RequestContext } from '#lib/kernel/context';

/** Teams as the `/teams` routes list, create, show, change and delete them. */

/** TransactWriteItems takes at most 100 items. */
const TRANSACTION_LIMIT = 100;

export interface TeamListRequest extends PageRequest {
  name?: string | undefined;
}

/** GET /teams: the active organization's teams, oldest first, optionally filtered by name. */
export async function listTeams(ctx: RequestContext, request: TeamListRequest): Promise<Page<Team>> {
  const principal = requirePrincipal(ctx);
  const page = await listTeamsOfOrganization({ orgId: principal.orgId, ...request });
  return { items: page.items.map(toTeam), total: page.total };
}

export interface NewTeam {
  name: string;
  description?: string | null | undefined;
}

/** POST /teams: the creator becomes the team's first owner, in the same transaction as the team. */
export async function createTeam(ctx: RequestContext, input: NewTeam): Promise<Team> {
  const principal = requireUser(ctx);
  const orgId = principal.orgId;
  const id = await nextTeamId(orgId);
  const now = ctx.ports.clock.now().toISOString();
  const team: TeamItem = {
    ...teamKeys.byId(orgId, id),
    id,
    org_id: orgId,
    name: input.name,
    name_lower: input.name.toLowerCase(),
    description: input.description ?? null,
    member_count: 1,
    created_at: now,
    updated_at: now,
    created_by: principal.userId,
  };
  const owner: TeamMemberItem = {
    ...teamKeys.member(orgId, id, principal.userId),
    org_id: orgId,
    team_id: id,
    user_id: principal.userId,
    role: 'owner',
    joined_at: now,
  };
  await transact(newTeamWrites(team, owner));
  return toTeam(team);
}

/** GET /teams/{id}: the team with all its members. */
export async function getTeamWithMembers(
  ctx: RequestContext,
  teamId: number,
): Promise<Team & { members: TeamMember[] }> {
  const principal = requirePrincipal(ctx);
  const team = await getLiveTeam(principal.orgId, teamId);
  const members = await listMembersOfTeam({ orgId: principal.orgId, teamId });
  return { ...toTeam(team), members: await membersWithUsers(members.items) };
}

/** PATCH /teams/{id}: team owners and admins, organization admins. */
export async function updateTeam(ctx: RequestContext, teamId: number, changes: TeamChanges): Promise<Team> {
  const principal = requirePrincipal(ctx);
  const team = await getLiveTeam(principal.orgId, teamId);
  await requireTeamManager(ctx, principal, team);
  try {
    const now = ctx.ports.clock.now().toISOString();
    return toTeam(await updateTeamFields({ orgId: principal.orgId, teamId, changes, now }));
  } catch (error) {
    if (isConditionFailed(error, 'team-missing')) throw teamNotFound();
    throw error;
  }
}

/**
 * DELETE /teams/{id}: organization admins and owners. A team can outgrow one transaction (100 items),
 * so the deletion first marks the team: from then on it answers 404 and refuses new members and
 * invites, so the children read next are all there will be. They are deleted in transactions, the last
 * one taking the team record with it; a deletion that fails halfway is finished by calling DELETE again.
 */
export async function deleteTeam(ctx: RequestContext, teamId: number): Promise<{ id: number }> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const team = await getTeamItem(orgId, teamId);
  if (!team) throw teamNotFound();
  requireOrgRole(ctx, 'admin');
  if (!team.deleting_at) {
    try {
      await markTeamDeleting(orgId, teamId, ctx.ports.clock.now().toISOString());
    } catch (error) {
      if (isConditionFailed(error, 'team-missing')) throw teamNotFound();
      throw error;
    }
  }
  const deletes = (await teamContentKeys(orgId, teamId)).map((Key) => ({ Delete: { Key } }));
  // The last transaction carries the team record and as many children as fit beside it.
  const tailStart = Math.max(0, deletes.length - (TRANSACTION_LIMIT - 1));
  for (let start = 0; start < tailStart; start += TRANSACTION_LIMIT) {
    await transact(deletes.slice(start, Math.min(start + TRANSACTION_LIMIT, tailStart)));
  }
  await transact([...deletes.slice(tailStart), teamDeletionWrite(orgId, teamId)], {
    'team-missing': teamNotFound,
  });
  return { id: teamId };
}
