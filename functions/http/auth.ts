import { email } from '#lib/app/email';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { SESSION_COOKIE } from '#lib/http/middleware/authenticate';
import { withCookies } from '#lib/http/results';
import { ACCESS_TOKEN_SECONDS } from '#lib/identity/access-tokens';
import * as Registration from '#lib/identity/registration';
import * as Sessions from '#lib/identity/sessions';
import { forgotPassword, login, logout, me, refresh, register, resetPassword } from '#lib/routes/auth';

const cookie = (value: string, maxAge: number, secure: boolean) =>
  `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;

const overHttps = (headers: Record<string, string>) => headers['x-forwarded-proto']?.split(',')[0]?.trim() === 'https';

/** The auth function; tests pass options (a clock they move for login waits). */
export const authHandler = (options: GroupOptions = {}) =>
  groupHandler(
    'auth',
    [
      route(register, async ({ body, ctx }) => await Registration.register(ctx, body)),
      route(login, async ({ body, ctx, sourceIp, headers }) => {
        const session = await Sessions.login(ctx, { ...body, sourceIp }, ctx.ports.secrets.accessTokenKey);
        return withCookies({ success: true, ...session }, [
          cookie(session.token, ACCESS_TOKEN_SECONDS, overHttps(headers)),
        ]);
      }),
      route(refresh, async ({ body, ctx, headers }) => {
        const session = await Sessions.refresh(ctx, body.refresh_token, ctx.ports.secrets.accessTokenKey);
        return withCookies({ success: true, ...session }, [
          cookie(session.token, ACCESS_TOKEN_SECONDS, overHttps(headers)),
        ]);
      }),
      route(logout, async ({ body, ctx, headers }) => {
        const result = await Sessions.logout(ctx, body?.all_devices ?? false);
        return withCookies(result, [cookie('', 0, overHttps(headers))]);
      }),
      route(me, async ({ principal }) => {
        const user = principal?.user;
        return {
          id: user?.id ?? null,
          username: user?.username ?? null,
          email: user?.email ?? null,
          role: user?.role ?? null,
          avatar_url: user?.avatar_url ?? null,
          created_at: user?.created_at ?? null,
          updated_at: user?.updated_at ?? null,
          organization: { ...principal!.organization, role: principal?.orgRole ?? null },
          auth: {
            method: principal!.method,
            capability: principal!.capability,
            scopes: principal!.scopes,
            key_id: principal?.keyId ?? null,
          },
        };
      }),
      route(forgotPassword, async ({ body, ctx }) => Sessions.forgotPassword(ctx, body.email)),
      route(resetPassword, async ({ body, ctx }) => Sessions.resetPassword(ctx, body.token, body.password)),
    ],
    { ...options, ports: { email, ...options.ports } },
  );

export const handler = authHandler();
