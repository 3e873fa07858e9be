import { randomBase62, randomToken, sha256 } from '#lib/crypto/secrets';
import type { Page, PageRequest } from '#lib/db/paging';
import { transact } from '#lib/db/transactions';
import { ConflictError, NotFoundError } from '#lib/errors';
import { requirePrincipal, requireUser } from '#lib/identity/access';
import { getMembership } from '#lib/identity/memberships';
import type { TeamRole } from '#lib/identity/roles';
import { getLiveTeam, requireTeamManager, teamNotFound } from '#lib/identity/team-access';
import {
  getTeamInvite,
  getTeamInviteToken,
  listOpenTeamInvites,
  newTeamInviteWrites,
  type TeamInvite,
  type TeamInviteItem,
  type TeamInviteTokenItem,
  teamInviteAcceptanceWrites,
  teamInviteWithdrawalWrites,
  toTeamInvite,
} from '#lib/identity/team-invite-records';
import { alreadyTeamMember } from '#lib/identity/team-members';
import {
  getTeamItem,
  getTeamMember,
  type Team,
  type TeamMember,
  type TeamMemberItem,
  teamJoinWrites,
  teamKeys,
  toTeam,
  toTeamMember,
} from '#lib/identity/team-records';
import { DAY_SECONDS, epochSeconds } from '#lib/identity/ttl';
import { getUserItem, userIdByEmail } from '#lib/identity/users';
import type { RequestContext } from '#lib/kernel/context';

/** Invites into a team as the `/teams/{id}/invites` routes send and accept them. */

/** How long an emailed invite can be accepted. */
export const TEAM_INVITE_TTL_DAYS = 7;

const inviteNotFound = () => new NotFoundError('Invite not found, expired or already used');

/** GET /teams/{id}/invites: invites still waiting for an answer; for those who may invite. */
export async function listTeamInvites(
  ctx: RequestContext,
  teamId: number,
  page: PageRequest,
): Promise<Page<TeamInvite>> {
  const principal = requirePrincipal(ctx);
  const team = await getLiveTeam(principal.orgId, teamId);
  await requireTeamManager(ctx, principal, team);
  const now = ctx.ports.clock.now();
  const result = await listOpenTeamInvites({ orgId: principal.orgId, teamId, now, ...page });
  return { items: result.items.map((item) => toTeamInvite(item, now)), total: result.total };
}

export interface NewTeamInvite {
  email: string;
  role: TeamRole;
}

/**
 * POST /teams/{id}/invites. One open invite per address and team is enforced by a guard item written
 * in the same transaction as the invite (two concurrent invites cannot both pass a read). The token is
 * sent by email and stored only as its SHA-256 lookup item; if the email cannot be sent, the invite is
 * withdrawn again, since nobody could ever use it and it would block a new one for a week.
 */
export async function createTeamInvite(ctx: RequestContext, teamId: number, input: NewTeamInvite): Promise<TeamInvite> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const team = await getLiveTeam(orgId, teamId);
  await requireTeamManager(ctx, principal, team, input.role === 'owner');
  const existingUserId = await userIdByEmail(input.email);
  if (existingUserId !== undefined && (await getTeamMember(orgId, teamId, existingUserId))) {
    throw alreadyTeamMember();
  }
  const token = randomToken(32);
  const tokenHash = sha256(token);
  const now = ctx.ports.clock.now();
  const expiresAt = epochSeconds(now) + TEAM_INVITE_TTL_DAYS * DAY_SECONDS;
  const inviteId = `tinv_${randomBase62(16)}`;
  const invite: TeamInviteItem = {
    ...teamKeys.invite(orgId, teamId, inviteId),
    id: inviteId,
    org_id: orgId,
    team_id: teamId,
    email: input.email,
    role: input.role,
    status: 'pending',
    valid_until: new Date(expiresAt * 1000).toISOString(),
    token_hash: tokenHash,
    created_at: now.toISOString(),
    invited_by: principal.userId ?? null,
  };
  const lookup: TeamInviteTokenItem = {
    ...teamKeys.inviteToken(tokenHash),
    org_id: orgId,
    team_id: teamId,
    invite_id: inviteId,
    expires_at: expiresAt,
  };
  await transact(newTeamInviteWrites(invite, lookup, epochSeconds(now)), {
    'team-invite-active': () => new ConflictError('An active invite for this email exists'),
    'team-missing': teamNotFound,
  });
  try {
    await ctx.ports.email.send({
      to: input.email,
      subject: `You are invited to join the team ${team.name}`,
      text: [
        `You have been invited to join the team "${team.name}" as ${input.role}.`,
        '',
        'To accept, send an authenticated POST request (as a member of the organization) to:',
        `${ctx.baseUrl}/teams/invites/${token}/accept`,
        '',
        `The invite expires on ${invite.valid_until}.`,
      ].join('\n'),
    });
  } catch (error) {
    await transact(teamInviteWithdrawalWrites(invite));
    throw error;
  }
  return toTeamInvite(invite, now);
}

/**
 * POST /teams/invites/{token}/accept. The caller joins the team with the invite's role. Consuming the
 * lookup item (conditionally, while unexpired) is part of the joining transaction, so an invite is used
 * at most once even by concurrent requests. Every reason an invite cannot be used answers the same 404,
 * including a caller outside the team's organization, who learns nothing about it.
 */
export async function acceptTeamInvite(
  ctx: RequestContext,
  token: string,
): Promise<{ team: Team; member: TeamMember }> {
  const principal = requireUser(ctx);
  const now = ctx.ports.clock.now();
  const lookup = await getTeamInviteToken(token);
  if (!lookup || lookup.expires_at <= epochSeconds(now)) throw inviteNotFound();
  const { org_id: orgId, team_id: teamId, invite_id: inviteId } = lookup;
  const [membership, team, invite] = await Promise.all([
    getMembership(orgId, principal.userId),
    getTeamItem(orgId, teamId),
    getTeamInvite(orgId, teamId, inviteId),
  ]);
  if (!membership || !team || team.deleting_at || !invite || invite.status !== 'pending') {
    throw inviteNotFound();
  }
  if (await getTeamMember(orgId, teamId, principal.userId)) throw alreadyTeamMember();
  const member: TeamMemberItem = {
    ...teamKeys.member(orgId, teamId, principal.userId),
    org_id: orgId,
    team_id: teamId,
    user_id: principal.userId,
    role: invite.role,
    joined_at: now.toISOString(),
  };
  await transact(
    [...teamInviteAcceptanceWrites({ lookup, invite, userId: principal.userId, now }), ...teamJoinWrites(member)],
    {
      'team-invite-used': inviteNotFound,
      'not-member': inviteNotFound,
      'already-team-member': alreadyTeamMember,
      'team-missing': inviteNotFound,
    },
  );
  const [joined, user] = await Promise.all([getTeamItem(orgId, teamId), getUserItem(principal.userId)]);
  return {
    team: toTeam(joined ?? { ...team, member_count: team.member_count + 1 }),
    member: toTeamMember(member, user),
  };
}
