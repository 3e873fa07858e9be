import { apiKeyKeys } from '#lib/identity/api-key-records';
import { inviteKeys } from '#lib/identity/invite-records';
import { throttleKey } from '#lib/identity/login-throttle';
import { membershipKeys } from '#lib/identity/memberships';
import { organizationKeys } from '#lib/identity/organizations';
import { sessionKeys } from '#lib/identity/session-records';
import { teamKeys } from '#lib/identity/team-records';
import { userKeys } from '#lib/identity/users';

export { epochSeconds } from '#lib/identity/ttl';

/**
 * Where identity records live in the table.
 *
 * | record | pk | sk | indexes |
 * |---|---|---|---|
 * | user | `USER#<id>` | `USER` | gsi1: `USERS` / `USER#<pad id>` (all users, by id) |
 * | organization | `T#<org>` | `ORG` | gsi1: `ORGS` / `ORG#<created>#<org>` |
 * | membership | `T#<org>` | `MEMBER#<pad user>` | gsi1: `USER#<id>#ORGS` / `ORG#<org>` (a user's organizations) |
 * | invite | `T#<org>` | `INVITE#<id>` | |
 * | invite token | `INVITETOKEN#<sha256>` | `INVITETOKEN` | TTL |
 * | API key | `T#<org>` | `APIKEY#<id>` | |
 * | API key lookup | `APIKEYHASH#<sha256>` | `APIKEYHASH` | TTL while in a rotation grace |
 * | API key use | `T#<org>` | `APIKEYUSE#<id>#<time>#<rand>` | TTL |
 * | team | `T#<org>` | `TEAM#<pad id>` | |
 * | team member | `T#<org>` | `TEAMMEMBER#<pad team>#<pad user>` | |
 * | team invite | `T#<org>` | `TEAMINVITE#<pad team>#<id>` | |
 * | refresh token | `REFRESH#<sha256>` | `REFRESH` | TTL |
 * | refresh family | `RFAMILY#<id>` | `RFAMILY` | TTL |
 * | revoked access token | `REVOKED#<jti>` | `REVOKED` | TTL at the token's expiry |
 * | password reset | `RESET#<sha256>` | `RESET` | TTL |
 * | login throttle | `THROTTLE#<kind>#<value>` | `THROTTLE` | TTL |
 *
 * Uniqueness guards (see lib/db/transactions): `email`, `username`, `org-slug`.
 */
export const identityKeys = {
  user: userKeys.byId,
  usersIndex: userKeys.allUsersIndex,

  organization: organizationKeys.byId,
  organizationsIndex: organizationKeys.allOrganizationsIndex,

  membership: membershipKeys.byId,
  membershipByUser: membershipKeys.byUserIndex,

  invite: inviteKeys.byId,
  inviteToken: inviteKeys.token,

  apiKey: apiKeyKeys.byId,
  apiKeyHash: apiKeyKeys.lookup,
  apiKeyUse: apiKeyKeys.use,

  team: teamKeys.byId,
  teamMember: teamKeys.member,
  teamInvite: teamKeys.invite,

  refreshToken: sessionKeys.refreshToken,
  refreshFamily: sessionKeys.refreshFamily,
  revokedToken: sessionKeys.revokedToken,
  passwordReset: sessionKeys.passwordReset,
  throttle: throttleKey,
};
