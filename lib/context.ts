import type { Clock, EmailSender } from '#lib/adapters/ports';
import type { Tier } from '#lib/config';
import type { Capability, OrgRole } from '#lib/identity/roles';
import type { User } from '#lib/identity/users';

/** Who is calling, resolved by the authentication middleware on `bearer` routes. */
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
  /** Records the authenticator already read, so that handlers need not read them again. */
  user?: User;
  organization: { id: string; name: string; slug: string; tier?: Tier };
}

/** What every domain function receives: the caller, the trace id and the ports. */
export interface RequestContext {
  traceId: string;
  principal?: Principal;
  clock: Clock;
  email: EmailSender;
  /** Base URL of this deployment as the caller reached it (for links in emails). */
  baseUrl: string;
}
