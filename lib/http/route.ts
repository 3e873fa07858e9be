import type * as z from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** How a caller proves who it is: nothing, a bearer credential (JWT, cookie or API key), or a signature. */
export type AuthMode = 'none' | 'bearer' | 'signature';

/** The shape of a success body: `{ data }`, `{ data, meta }` for lists and deletions, or a raw body. */
export type Envelope = 'item' | 'list' | 'deleted' | 'raw';

type AnyZod = z.ZodType;

/**
 * One entry of the route registry. The same object feeds the group's router, the OpenAPI document and
 * the test that compares both with serverless.yml.
 */
export interface RouteDef<
  P extends AnyZod | undefined = AnyZod | undefined,
  Q extends AnyZod | undefined = AnyZod | undefined,
  B extends AnyZod | undefined = AnyZod | undefined,
  R extends AnyZod | undefined = AnyZod | undefined,
> {
  /** The Lambda function (endpoint group) that serves this route. */
  group: string;
  method: HttpMethod;
  /** Path below `/api`, with `{name}` parameters, e.g. `/tasks/{id}`. */
  path: string;
  auth: AuthMode;
  /**
   * What a bearer caller must be allowed to do: `read` for GET routes and `write` for the others unless
   * given. API keys need the matching scope; users the matching role (see lib/identity/roles).
   */
  permission?: 'read' | 'write' | 'admin';
  summary: string;
  description?: string;
  tags: string[];
  params?: P;
  query?: Q;
  body?: B;
  /** Schema of `data` in the success body (or of the whole body for `envelope: 'raw'` JSON). */
  response?: R;
  envelope?: Envelope;
  /**
   * A list's `meta` where it says more than `total`, `limit` and `offset`: `estimated`, a list whose total
   * may be an estimate (`total_exact`). A name rather than a schema, since only the OpenAPI document builds
   * the envelopes' schemas (lib/openapi/envelopes.ts).
   */
  listMeta?: 'estimated';
  /** Success status; 200 unless given. */
  status?: number;
  /** Media type of a raw response, for the OpenAPI document; several when the path decides (static assets). */
  contentType?: string | string[];
  /** Error statuses this route may answer besides the common ones, for the OpenAPI document. */
  errors?: number[];
  /**
   * A per-minute limit of this route's own, per organization, on top of the tier's (task creation:
   * 30 a minute). Counted in the same write as the tier's windows.
   */
  rateLimit?: { name: string; perMinute: number };
  /**
   * `false` for routes that machines poll (health and readiness probes, the documentation and its
   * assets): they count against no limit, so an uptime monitor or load balancer is never answered 429.
   */
  rateLimited?: false;
  /**
   * The answer sets the session cookie (login, refresh). A browser request from an Origin outside
   * ALLOWED_ORIGINS is refused with 403, so a cross-site form cannot log a victim into an account of the
   * attacker's (login CSRF); clients that send no Origin (curl, servers) are unaffected.
   */
  startsSession?: true;
  /** Statuses that answer with the success schema too (health probes answer 503 with their record). */
  alsoAnswers?: number[];
}

/** Declares a registry entry; the identity function keeps the schema types for the route's handler. */
export function defineRoute<
  P extends AnyZod | undefined = undefined,
  Q extends AnyZod | undefined = undefined,
  B extends AnyZod | undefined = undefined,
  R extends AnyZod | undefined = undefined,
>(def: RouteDef<P, Q, B, R>): RouteDef<P, Q, B, R> {
  return def;
}

/** The permission a route needs: its own, or `read` for GET and `write` for every other method. */
export const requiredPermission = (def: Pick<RouteDef, 'permission' | 'method'>): 'read' | 'write' | 'admin' =>
  def.permission ?? (def.method === 'GET' ? 'read' : 'write');

export type Infer<S> = [S] extends [AnyZod] ? z.output<S> : undefined;

type Parts<D> = D extends RouteDef<infer P, infer Q, infer B, infer R> ? { P: P; Q: Q; B: B; R: R } : never;
export type ParamsOf<D> = Infer<Parts<D>['P']>;
export type QueryOf<D> = Infer<Parts<D>['Q']>;
export type BodyOf<D> = Infer<Parts<D>['B']>;
