import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { email, password, Success, UserRecord, username } from '#lib/routes/schemas';

/** Registration, login, sessions and password resets: the `auth` function. */

const group = 'auth';
const tags = ['Authentication'];

export const Session = z
  .object({
    success: z.literal(true),
    token: z.string().meta({ description: 'Access JWT (HS256), valid for one hour' }),
    refresh_token: z
      .string()
      .meta({ description: 'Rotating refresh token, valid for 30 days; exchange at POST /auth/refresh' }),
    expires_in: z.number().int().meta({ description: 'Seconds until the access token expires' }),
    organization_id: z.string().meta({ description: 'The organization the token acts in' }),
    user: UserRecord,
  })
  .meta({ id: 'LoginResponse' });

export const Me = UserRecord.extend({
  id: z.number().int().nullable(),
  username: z.string().nullable(),
  email: z.string().nullable(),
  role: z.string().nullable(),
  avatar_url: z.string().nullable(),
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
  organization: z.object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    role: z.string().nullable().meta({ description: 'The caller’s organization role; null for API keys' }),
  }),
  auth: z.object({
    method: z.enum(['jwt', 'cookie', 'api_key']),
    capability: z.enum(['read', 'write', 'admin']),
    scopes: z.array(z.string()),
    key_id: z.string().nullable(),
  }),
}).meta({
  id: 'Me',
  description:
    'The current user, the organization the request acts in and how it authenticated. For an API key (an ' +
    'organization credential with no user behind it) the user fields are null.',
});

export const register = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/auth/register',
  auth: 'none',
  summary: 'Register a user (and the personal organization the user owns)',
  description:
    'The first user of an instance becomes its admin. 409 when the username or email is taken (case-insensitive).',
  body: z.object({
    username,
    email,
    password,
    invite_code: z.string().max(256).optional(),
    terms_accepted: z.literal(true, { error: 'must be true' }),
    privacy_accepted: z.literal(true, { error: 'must be true' }),
  }),
  response: UserRecord,
  status: 201,
  errors: [409],
});

export const login = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/auth/login',
  auth: 'none',
  startsSession: true,
  summary: 'Log in with email and password',
  description:
    'Returns an access token and a refresh token and sets the `service_jwt` cookie (HttpOnly, SameSite=Lax, ' +
    'Secure over HTTPS); a browser request from an Origin outside ALLOWED_ORIGINS is refused with 403 (login ' +
    'CSRF). Wrong email and wrong password answer the same 401. After 10 failures for one email ' +
    '(50 for one source IP) within 15 minutes, logins answer 429 with Retry-After until the window ends.',
  body: z.object({ email: z.string().trim().min(1).max(254), password: z.string().min(1).max(256) }),
  response: Session,
  errors: [401, 429],
});

export const refresh = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/auth/refresh',
  auth: 'none',
  startsSession: true,
  summary: 'Exchange a refresh token for a new session (addition)',
  description:
    'The refresh token in the body is the credential. Each token works once and is replaced by the one ' +
    'returned; presenting a spent token again revokes every token of that login (401).',
  body: z.object({ refresh_token: z.string().min(1).max(256) }),
  response: Session,
  errors: [401],
});

export const logout = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/auth/logout',
  auth: 'bearer',
  permission: 'read',
  summary: 'Revoke the current token, or every token of the user',
  description:
    'The token is refused from the next request on. `all_devices: true` ends every session of the user. Clears ' +
    'the cookie.',
  body: z.object({ all_devices: z.boolean().optional() }).optional(),
  response: z.object({ success: z.literal(true), all_devices: z.boolean() }),
});

export const me = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/auth/me',
  auth: 'bearer',
  summary: 'The current user',
  response: Me,
});

export const forgotPassword = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/auth/forgot-password',
  auth: 'none',
  summary: 'Send a password reset link',
  description:
    'Answers 200 whether or not the address exists. The link (a one-time token, valid 60 minutes) goes out by email.',
  body: z.object({ email }),
  response: Success,
});

export const resetPassword = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/auth/reset-password',
  auth: 'none',
  summary: 'Set a new password with a reset token (addition)',
  description: 'The token works once. Every existing session of the user ends.',
  body: z.object({ token: z.string().min(1).max(256), password }),
  response: Success,
});
