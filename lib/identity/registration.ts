import { randomBase62 } from '#lib/crypto/secrets';
import { transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed, NotFoundError, ValidationError } from '#lib/errors';
import { getInviteToken } from '#lib/identity/invite-records';
import { acceptInviteForUser } from '#lib/identity/organization-invites';
import { newOrganizationWrites, type OrganizationItem, personalOrgSlug } from '#lib/identity/organizations';
import { hashPassword } from '#lib/identity/passwords';
import {
  newUserWrites,
  nextUserId,
  toUser,
  type User,
  type UserItem,
  userConflicts,
  userKeys,
} from '#lib/identity/users';
import type { RequestContext } from '#lib/kernel/context';

const inviteUnusable = () =>
  new ValidationError('The invite code is invalid or expired', [
    { path: 'invite_code', message: 'is invalid or expired' },
  ]);

export interface NewUser {
  username: string;
  email: string;
  password: string;
}

/**
 * POST /auth/register. With an `invite_code` (an organization invite token), the code is checked
 * before the account exists, so a bad code creates nothing, and the new user joins that organization.
 */
export async function register(ctx: RequestContext, input: NewUser & { invite_code?: string }): Promise<User> {
  if (input.invite_code !== undefined) await assertInviteUsable(ctx, input.invite_code);
  const { user } = await registerUser(ctx, input);
  if (input.invite_code !== undefined) {
    try {
      await acceptInviteForUser(ctx, input.invite_code, user.id);
    } catch (error) {
      // Someone used the code between the check and now: the account stands, without the invite.
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
  return toUser(user);
}

async function assertInviteUsable(ctx: RequestContext, code: string): Promise<void> {
  const validUntil = (await getInviteToken(code))?.valid_until;
  if (!validUntil || validUntil <= ctx.ports.clock.now().toISOString()) throw inviteUnusable();
}

/**
 * Registers a user with a personal organization that the user owns, in one transaction: the user, the
 * email and username guards, the organization, its slug guard and the owner membership all land, or
 * nothing does. The instance's first user (id 1, handed out by an atomic counter) is its admin.
 */
export async function registerUser(
  ctx: RequestContext,
  input: NewUser,
): Promise<{ user: UserItem; org: OrganizationItem }> {
  const passwordHash = await hashPassword(input.password);
  const userId = await nextUserId();
  const now = ctx.ports.clock.now().toISOString();
  const orgId = `org_${randomBase62(16)}`;
  const user: UserItem = {
    ...userKeys.byId(userId),
    ...userKeys.allUsersIndex(userId),
    id: userId,
    username: input.username,
    email: input.email,
    role: userId === 1 ? 'admin' : 'member',
    avatar_url: null,
    password_hash: passwordHash,
    token_version: 0,
    personal_org_id: orgId,
    created_at: now,
    updated_at: now,
  };
  // The username's slug, or (when another organization has it) the same with a random suffix.
  for (const slug of [
    personalOrgSlug(input.username),
    `${personalOrgSlug(input.username)}-${randomBase62(6).toLowerCase()}`,
  ]) {
    const org = newOrganizationWrites({
      orgId,
      name: input.username,
      slug,
      ownerId: userId,
      now,
      tier: undefined,
    });
    try {
      await transact([...newUserWrites(user), ...org.writes], userConflicts);
      return { user, org: org.item };
    } catch (error) {
      if (!isConditionFailed(error, 'slug-taken')) throw error;
    }
  }
  throw new ConflictError('Could not find a free slug for the personal organization; try again');
}
