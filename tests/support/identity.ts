import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { handler as auth } from '#functions/http/auth';
import { db, TABLE } from '#lib/db/client';
import type { GroupHandler } from '#lib/http/group-handler';
import { identityKeys } from '#lib/identity/keys';
import { assertContract } from '#tests/support/contract';
import { context, httpEvent } from '#tests/support/events';
import { assertNoLeaks, registerCanary } from '#tests/support/leak-scan';

/**
 * Test helpers for identity: register users and log them in through the real auth function, and call
 * any group function as a given caller.
 */

export interface CallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface CallResult {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies of every shape
  body: any;
  headers: Record<string, string>;
  cookies: string[];
}

/**
 * Calls a group function with a method and path (under /api), as the holder of `token`. Every response
 * goes through the leak scan (tests/support/leak-scan.ts) and must keep the OpenAPI document's promise for
 * its route and status (tests/support/contract.ts).
 */
export async function call(
  handler: GroupHandler,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  registerSecretsOf(method, path, options.body);
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const event = httpEvent(method, `/api${path}`, {
    headers,
    ...(options.query ? { query: options.query } : {}),
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const response = (await handler(event, context())) as APIGatewayProxyStructuredResultV2;
  const status = response.statusCode ?? 200;
  const body = response.body ? JSON.parse(response.body) : undefined;
  const answered = (response.headers ?? {}) as Record<string, string>;
  assertNoLeaks(method, path, status, body);
  assertContract(method, path, status, body, answered['Content-Type']);
  return {
    status,
    body,
    headers: answered,
    cookies: response.cookies ?? [],
  };
}

/**
 * Passwords and credential values a test sends become canaries: no later response or log line may contain
 * them (a credential's value only its own read).
 */
function registerSecretsOf(method: string, path: string, body: unknown): void {
  if (body === null || typeof body !== 'object') return;
  const value = (body as Record<string, unknown>).value;
  if (method === 'POST' && /^(\/v1)?\/credentials$/.test(path) && typeof value === 'string') {
    registerCanary(value, 'credential');
  }
  for (const field of ['password', 'new_password', 'current_password']) {
    const value = (body as Record<string, unknown>)[field];
    if (typeof value === 'string') registerCanary(value);
  }
}

export interface TestUser {
  id: number;
  username: string;
  email: string;
  password: string;
  token: string;
  refreshToken: string;
  /** The user's personal organization (the one the token acts in). */
  orgId: string;
}

let counter = 0;

/** Registers a new user (unique name) and logs in. The first user of a test file's table is its admin. */
export async function newUser(prefix = 'user'): Promise<TestUser> {
  counter += 1;
  const username = `${prefix}${counter}${Math.random().toString(36).slice(2, 6)}`;
  const email = `${username}@example.com`;
  const password = 'correct horse battery';
  const registered = await call(auth, 'POST', '/auth/register', {
    body: { username, email, password, terms_accepted: true, privacy_accepted: true },
  });
  if (registered.status !== 201) throw new Error(`register failed: ${JSON.stringify(registered.body)}`);
  return login(email, password);
}

export async function login(email: string, password: string): Promise<TestUser> {
  const response = await call(auth, 'POST', '/auth/login', { body: { email, password } });
  if (response.status !== 200) throw new Error(`login failed: ${JSON.stringify(response.body)}`);
  const data = response.body.data;
  return {
    id: data.user.id,
    username: data.user.username,
    email,
    password,
    token: data.token,
    refreshToken: data.refresh_token,
    orgId: data.organization_id,
  };
}

/**
 * Writes an organization membership directly, for tests of groups other than organizations. Does not
 * count it in member_count; tests that rely on the count add members through the endpoint.
 */
export async function joinOrganization(user: Pick<TestUser, 'id'>, orgId: string, role = 'member'): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: TABLE,
      Item: {
        ...identityKeys.membership(orgId, user.id),
        ...identityKeys.membershipByUser(user.id, orgId),
        org_id: orgId,
        user_id: user.id,
        role,
        joined_at: new Date().toISOString(),
      },
    }),
  );
}

export interface OutboxMessage {
  to: string;
  subject: string;
  text: string;
}

/** Messages the local email adapter wrote to DATA_DIR/outbox for an address, oldest first. */
export function outboxFor(address: string): OutboxMessage[] {
  const dir = join(process.env.DATA_DIR as string, 'outbox');
  let files: string[] = [];
  try {
    files = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return files
    .map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as OutboxMessage)
    .filter((message) => message.to === address);
}
