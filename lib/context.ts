import type { Clock } from '#lib/adapters/ports';

/** Who is calling. Filled by the authentication middleware on `bearer` routes. */
export interface Principal {
  kind: 'user' | 'api_key';
  /** The organization (tenant) the request acts in. */
  orgId: string;
  userId?: string;
  username?: string;
  role?: string;
  scopes: string[];
  keyId?: string;
  tokenId?: string;
}

/** What every domain function receives: the caller, the trace id and the ports. */
export interface RequestContext {
  traceId: string;
  principal?: Principal;
  clock: Clock;
}
