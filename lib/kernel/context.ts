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

/** Turns a credential into a principal, or throws UnauthorizedError / ForbiddenError. */
export interface Authenticator {
  authenticate(ctx: RequestContext, credential: Credential): Promise<Principal>;
  /** Called once the response is known, e.g. to append an API key's usage record. */
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
