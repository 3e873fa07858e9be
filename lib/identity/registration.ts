import type { RequestContext } from '#lib/context';
import { sha256 } from '#lib/crypto/secrets';
import { table } from '#lib/db/table';
import { NotFoundError, ValidationError } from '#lib/errors';
import { identityKeys } from '#lib/identity/keys';
import { acceptInviteForUser } from '#lib/identity/organization-admin';
import { type NewUser, registerUser, toUser, type User } from '#lib/identity/users';

const inviteUnusable = () =>
  new ValidationError('The invite code is invalid or expired', [
    { path: 'body.invite_code', message: 'is invalid or expired' },
  ]);

/**
 * POST /auth/register. With an `invite_code` (an organization invite token), the code is checked
 * before the account exists, so a bad code creates nothing, and the new user joins that organization.
 */
export async function register(
  ctx: RequestContext,
  input: NewUser & { invite_code?: string },
): Promise<User> {
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
  const found = await table.get({ Key: identityKeys.inviteToken(sha256(code)), ConsistentRead: true });
  const validUntil = found.Item?.valid_until as string | undefined;
  if (!validUntil || validUntil <= ctx.clock.now().toISOString()) throw inviteUnusable();
}
