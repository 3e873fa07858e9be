import type { AuthFixture } from '#tests/support/auth-fixture';
import { asymmetricTokens, claimsOf, forgeToken, nowSeconds, rawToken } from '#tests/support/credentials';

/**
 * The bad credentials of the authentication matrix, as request headers, each named for what is wrong
 * with it; built once from the fixture's live and dead credentials and sent to many routes.
 */

export type Credentials = Array<[string, Record<string, string>]>;
const inHeader = (cases: Array<[string, string]>): Credentials =>
  cases.map(([name, value]) => [name, { authorization: `Bearer ${value}` }]);

/**
 * The bad credentials every bearer route is sent: none, malformed, expired and not yet valid, for another
 * audience or issuer, forged signatures and algorithms, and credentials the service has since killed.
 */
export async function everyRouteCredentials(fixture: AuthFixture): Promise<Credentials> {
  const { owner, dead } = fixture;
  const token = owner.token;
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const now = nowSeconds();
  const forged = (changes: Record<string, unknown>) => forgeToken(token, changes);
  const otherSecret = new TextEncoder().encode('another-secret-that-is-long-enough-00000000');
  return [
    ['no credential', {}],
    ['Bearer with nothing', { authorization: 'Bearer' }],
    ['the Basic scheme', { authorization: `Basic ${Buffer.from('owner:password').toString('base64')}` }],
    ['a valid token under another scheme', { authorization: `Token ${token}` }],
    ...inHeader([
      ['garbage', 'garbage'],
      [
        'a JWT with a segment that is not base64url',
        `${header}.${payload.slice(0, 10)}*!${payload.slice(10)}.${signature}`,
      ],
      ['an expired token', await forged({ iat: now - 7_200, exp: now - 60 })],
      ['a token without exp', await forged({ exp: undefined })],
      ['a token valid only from an hour on (nbf)', await forged({ nbf: now + 3_600 })],
      ['a token for another audience', await forged({ aud: 'another-api' })],
      ['a token of another issuer', await forged({ iss: 'someone-else' })],
      ['a token signed with another secret', await forgeToken(token, {}, { secret: otherSecret })],
      ['an unsigned token (alg none)', rawToken({ alg: 'none', typ: 'JWT' }, claimsOf(token))],
      // The verifier holds one HMAC secret and no public key: confusion means a token that names another
      // algorithm (asymmetric, with its own key in the header, or a stronger HMAC with the right secret).
      ...Object.entries(await asymmetricTokens(token)),
      ['HS512 with the service’s own secret', await forgeToken(token, {}, { alg: 'HS512' })],
      ['a token revoked by logout', dead.loggedOut],
      ['the token that logged out everywhere', dead.loggedOutEverywhere],
      ['another session’s token after logout everywhere', dead.otherSessionLoggedOutEverywhere],
      ['a revoked API key', dead.revokedKey],
      ['a rolled API key', dead.rolledKey],
      ['a rotated API key after its grace', dead.keyPastGrace],
      ['an expired API key', dead.expiredKey],
    ]),
  ];
}

/** More bad credentials, for a few routes: other ways to be wrong, caught by the same verifier. */
export async function moreCredentials(fixture: AuthFixture): Promise<Credentials> {
  const { owner, dead, instanceAdmin } = fixture;
  const token = owner.token;
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const now = nowSeconds();
  const forged = (changes: Record<string, unknown>) => forgeToken(token, changes);
  const adminKey = fixture.callers.adminKey.headers.authorization?.slice('Bearer '.length) ?? '';
  return [
    ['Bearer and a space', { authorization: 'Bearer ' }],
    ['a valid token without a scheme', { authorization: token }],
    ['two tokens', { authorization: `Bearer ${token} ${token}` }],
    ['an empty session cookie', { cookie: 'service_jwt=' }],
    ['a valid token in a cookie of another name', { cookie: `session=${token}` }],
    [
      'a valid session cookie beside a bad Authorization header',
      { cookie: `service_jwt=${token}`, authorization: 'Bearer x' },
    ],
    ['an expired token in the session cookie', { cookie: `service_jwt=${await forged({ exp: now - 60 })}` }],
    ['a revoked token in the session cookie', { cookie: `service_jwt=${dead.loggedOut}` }],
    ...inHeader([
      ['a JWT whose payload is not JSON', `${header}.${Buffer.from('not json').toString('base64url')}.${signature}`],
      ['a JWT of two segments', `${header}.${payload}`],
      ['a JWT of four segments', `${token}.${signature}`],
      ['a JWT with its signature cut short', token.slice(0, -4)],
      ['a JWT with another user’s payload', `${header}.${instanceAdmin.token.split('.')[1]}.${signature}`],
      ['a token without aud', await forged({ aud: undefined })],
      ['a token without iss', await forged({ iss: undefined })],
      ['a token without sub', await forged({ sub: undefined })],
      ['a token whose sub is not a user id', await forged({ sub: 'admin' })],
      ['a token of a user that does not exist', await forged({ sub: '999999' })],
      ['a token without jti', await forged({ jti: undefined })],
      ['a token without tv', await forged({ tv: undefined })],
      ['a token of an older token version', await forged({ tv: -1 })],
      ['a token without org', await forged({ org: undefined })],
      ['a token for an organization the user is not in', await forged({ org: instanceAdmin.orgId })],
      ['an unsigned token (alg NONE)', rawToken({ alg: 'NONE', typ: 'JWT' }, claimsOf(token))],
      ['alg none keeping the real signature', rawToken({ alg: 'none', typ: 'JWT' }, claimsOf(token), signature)],
      [
        'the real signature under a header that says RS256',
        rawToken({ alg: 'RS256', typ: 'JWT' }, claimsOf(token), signature),
      ],
      ['HS384 with the service’s own secret', await forgeToken(token, {}, { alg: 'HS384' })],
      ['a token of an erased user', dead.erasedUser],
      ['an API key that does not exist', `osk_live_${'A'.repeat(43)}`],
      ['a valid API key in other letter case', adminKey.toUpperCase()],
      ['a deactivated API key', dead.inactiveKey],
      ['a deleted API key', dead.deletedKey],
      ['an API key of a deleted organization', dead.keyOfDeletedOrganization],
    ]),
  ];
}
