import type { Ports } from '#lib/kernel/ports';

/**
 * The kernel's shared types: who is calling (the principal), how they proved it (the credential), and
 * what every domain function receives (the request context). The kernel imports no area: areas and
 * entry points import it.
 */

/** What a caller may do: `write` implies `read`, `admin` implies both. */
export type Capability = 'read' | 'write' | 'admin';
export type OrgRole = 'owner' | 'admin' | 'member' | 'viewer';
export type Tier = 'free' | 'pro' | 'teams' | 'enterprise';

/** The user behind a token, as the authenticator already read it. */
export interface PrincipalUser {
  id: number;
  username: string;
  email: string;
  role: string;
  avatar_url: string | null;
  created_at: string;
  updated_at: string;
}

/** Who is calling, resolved by authentication on `bearer` routes. */
export interface Principal {
  method: 'jwt' | 'cookie' | 'api_key';
  /** The organization (tenant) the request acts in. */
  orgId: string;
  /** What this caller may do in that organization. */
  capability: Capability;
  /** The user behind a token; for an API key, the user who created it (if still there). */
  userId?: number;
  username?: string;
  /** The user's instance role (admin, member, viewer, editor, builder, agent, demo). */
  userRole?: string;
  /** The user's role in the organization; absent for API keys. */
  orgRole?: OrgRole;
  isInstanceAdmin: boolean;
  scopes: string[];
  keyId?: string;
  /** The access token's id and expiry (epoch seconds), for logout. */
  tokenId?: string;
  tokenExpiresAt?: number;
  /** The login a token belongs to (its refresh token family), for logout. */
  sessionId?: string;
  /** Records the authenticator already read, so that handlers need not read them again. */
  user?: PrincipalUser;
  organization: { id: string; name: string; slug: string; tier?: Tier };
}

/**
 * A credential as presented, whatever carried it: an access token in an `Authorization: Bearer`
 * header (`jwt`) or in the session cookie (`cookie`), or an API key. `organizationId` is the
 * organization the caller asks to act in, when it names one.
 */
export interface Credential {
  kind: 'jwt' | 'cookie' | 'api_key';
  value: string;
  organizationId?: string;
}

/** One use of a credential, recorded once its answer is known (API key usage). */
export interface CredentialUse {
  method: string;
  route: string;
  status: number;
}

/** A table item's key, as routes name what they read first. */
export interface ItemKey {
  pk: string;
  sk: string;
}

/** What authentication knows of a caller once the credential is proven, before the rest is read. */
export type Caller = Pick<Principal, 'method' | 'orgId' | 'capability'>;

/** What the request around authentication asks of it, so that the request needs fewer round trips. */
export interface AuthenticateOptions {
  /**
   * The items the route reads first, named once the caller's organization is known: read in
   * authentication's own last round trip and kept for the request (lib/db/request-scope.ts), only once
   * the caller is proven to act in that organization.
   */
  alsoRead?: (orgId: string) => ItemKey[];
  /**
   * Called as soon as the credential is proven and its organization known, before authentication's
   * last read for it: may throw to refuse the request (a permission the route needs), and starts what
   * admitting it needs (the rate-limit count) beside that read.
   */
  admitted?: (caller: Caller) => void;
  /**
   * The request as an API key's usage record names it, with the status the route answers on success:
   * the record is written beside authentication's last read, and `completed` corrects its status when
   * the answer is another.
   */
  use?: CredentialUse;
}

/** Turns a credential into a principal, or throws UnauthorizedError / ForbiddenError. */
export interface Authenticator {
  authenticate(ctx: RequestContext, credential: Credential, options?: AuthenticateOptions): Promise<Principal>;
  /** Called once the response is known, e.g. to complete an API key's usage record. */
  completed?(ctx: RequestContext, principal: Principal, use: CredentialUse): Promise<void>;
}

/** What every domain function receives: the caller, the trace id and the ports. */
export interface RequestContext {
  traceId: string;
  principal?: Principal;
  ports: Ports;
  /** Base URL of this deployment as the caller reached it (for links in emails); HTTP requests only. */
  baseUrl: string;
}

/** A context for an entry point (HTTP, queue, schedule): the ports, the trace id, and the caller if any. */
export function requestContext(input: {
  ports: Ports;
  traceId: string;
  baseUrl?: string;
  principal?: Principal;
}): RequestContext {
  const { ports } = input;
  return { traceId: input.traceId, principal: input.principal, ports, baseUrl: input.baseUrl ?? '' };
}
