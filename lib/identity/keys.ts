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
 * Every identity record at one glance. Each entity module owns its keys, item types, conditions and
 * access patterns (the module named in the last column); `identityKeys` gathers their key builders for
 * code that reads identity records from outside those modules: authentication, billing and tests.
 *
 * | record | pk | sk | module |
 * |---|---|---|---|
 * | user | `USER#<id>` | `USER` | users (gsi1: `USERS` / `USER#<pad id>`) |
 * | email, username guard | `UNIQUE#email#…`, `UNIQUE#username#…` | `UNIQUE` | users |
 * | organization | `T#<org>` | `ORG` | organizations (gsi1: `ORGS` / `ORG#<created>#<org>`) |
 * | slug guard | `UNIQUE#org-slug#<slug>` | `UNIQUE` | organizations |
 * | membership | `T#<org>` | `MEMBER#<pad user>` | memberships (gsi1: `USER#<id>#ORGS` / `ORG#<org>`) |
 * | invite, its guard | `T#<org>` | `INVITE#<id>`, `INVITEFOR#<email>` | invite-records |
 * | invite token | `INVITETOKEN#<sha256>` | `INVITETOKEN` | invite-records |
 * | team, member, invite | `T#<org>` | `TEAM#…`, `TEAMMEMBER#…`, `TEAMINVITE#…` | team-records |
 * | team invite guard, token | `T#<org>`, `TEAMINVITETOKEN#<sha256>` | `TEAMINVITEACTIVE#…` | team-records |
 * | API key | `T#<org>` | `APIKEY#<id>` | api-key-records |
 * | API key use | `T#<org>#APIKEYUSE#<id>` | `<time>#<rand>` | api-key-records |
 * | API key lookup | `APIKEYHASH#<sha256>` | `APIKEYHASH` | api-key-records |
 * | refresh token, family | `REFRESH#<sha256>`, `RFAMILY#<id>` | `REFRESH`, `RFAMILY` | session-records |
 * | revoked access token | `REVOKED#<jti>` | `REVOKED` | session-records |
 * | password reset | `RESET#<sha256>` | `RESET` | session-records |
 * | login throttle | `THROTTLE#<kind>#<value>` | `THROTTLE` | login-throttle |
 *
 * Records with a lifetime carry the table's TTL attribute `expires_at` (epoch seconds, see ttl.ts).
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
