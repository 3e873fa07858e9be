import * as z from 'zod';
import { type ErrorDetail, ValidationError } from '#lib/errors';
import { SAFE_ID } from '#lib/webhooks/inbound/webhook-keys';

/**
 * Payload shapes of the inbound webhooks. They are checked only after the signature is verified (an
 * unsigned request learns nothing from a 400), and they name only the fields the service reads: the
 * providers send many more, which are kept as they are (loose objects).
 */

const safeId = (what: string) => z.string().regex(SAFE_ID, `${what} must be 1–128 letters, digits or . _ : -`);

const filePaths = z.array(z.string().max(4096)).max(10_000).default([]);

const GitCommit = z.looseObject({
  id: z.string().max(64).nullish(),
  added: filePaths,
  modified: filePaths,
  removed: filePaths,
});

/** The part of the git host's `push` event the service reads. */
export const GitPushPayload = z.looseObject({
  ref: z.string().min(1).max(512).meta({ description: 'e.g. `refs/heads/main`' }),
  before: z.string().max(64).nullish(),
  after: z
    .string()
    .regex(/^[0-9a-fA-F]{40,64}$/, 'after must be a commit SHA')
    .meta({ description: 'The commit the ref points to after the push' }),
  deleted: z.boolean().nullish(),
  // Read for the deploy pipeline's inputs only: a value of another shape is dropped, never refused.
  compare: z
    .string()
    .max(2048)
    .nullish()
    .catch(null)
    .meta({ description: 'The URL comparing the commits before and after the push' }),
  repository: z.looseObject({
    full_name: z.string().min(1).max(256),
    default_branch: z.string().min(1).max(256),
    html_url: z.string().max(2048).nullish(),
  }),
  pusher: z.looseObject({ name: z.string().max(256) }).nullish(),
  sender: z.looseObject({ login: z.string().max(256) }).nullish(),
  commits: z.array(GitCommit).max(2048).default([]),
  head_commit: GitCommit.nullable().optional(),
});
export type GitPush = z.output<typeof GitPushPayload>;

/** What every deploy event carries; the fields of handled types are checked by `DeploymentEventPayload`. */
export const DeployEventEnvelope = z.looseObject({
  id: safeId('id').meta({ description: 'Event id, unique per event; a repeated id is a duplicate' }),
  type: z.string().min(1).max(128).meta({
    description: 'deployment.completed or deployment.failed; other types are acknowledged and ignored unread',
    example: 'deployment.completed',
  }),
});

export const DeploymentEventPayload = DeployEventEnvelope.extend({
  created_at: z.string().max(64).nullish(),
  deployment_id: safeId('deployment_id').meta({ description: 'The hosting provider’s deployment id' }),
  project: z.string().max(256).nullish(),
  environment: z.string().max(128).nullish(),
  commit_sha: z.string().max(64).nullish(),
  url: z.string().max(2048).nullish(),
  error: z
    .looseObject({ code: z.string().max(128).nullish(), message: z.string().max(10_000).nullish() })
    .nullish()
    .meta({ description: 'Why the deployment failed (deployment.failed)' }),
});
export type DeploymentEvent = z.output<typeof DeploymentEventPayload>;

/** An inbound chat message, in the shape the service defines for messaging-platform bridges. */
export const ChatMessagePayload = z.looseObject({
  id: safeId('id').meta({ description: 'Message id, unique per message; a repeated id is a duplicate' }),
  channel: z.string().min(1).max(256).meta({ description: 'Where the message was sent, e.g. `web-widget`' }),
  user: z.looseObject({
    id: z.string().min(1).max(256),
    name: z.string().min(1).max(256),
    email: z.string().trim().max(254).pipe(z.email()).nullish(),
  }),
  text: z.string().min(1).max(10_000),
  sent_at: z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 time the customer sent it' }),
});
export type ChatMessage = z.output<typeof ChatMessagePayload>;

/**
 * Parses a verified payload: a signed body of the wrong shape is the sender's mistake, a 400 naming
 * each problem by its field (`repository.full_name`, `commits[0].added`); the HTTP layer places them in
 * the body. A payload that is missing, or not an object at all, is named as the whole `body`.
 */
export function parsePayload<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (body === undefined)
    throw new ValidationError('The request is not valid', [{ path: 'body', message: 'A JSON body is required' }]);
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const details: ErrorDetail[] = result.error.issues.map((issue) => ({
    path: fieldPath(issue.path) || 'body',
    message: issue.message,
  }));
  throw new ValidationError('The webhook payload is not valid', details);
}

/** `['commits', 0, 'added']` → `commits[0].added`. */
const fieldPath = (path: PropertyKey[]): string =>
  path.reduce<string>((joined, key) => {
    if (typeof key === 'number') return `${joined}[${key}]`;
    return joined === '' ? String(key) : `${joined}.${String(key)}`;
  }, '');
