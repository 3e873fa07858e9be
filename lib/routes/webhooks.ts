import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { ChatMessagePayload, DeploymentEventPayload, GitPushPayload } from '#lib/webhooks/inbound/payloads';

/**
 * Inbound webhooks (git pushes, deployments, chat messages): the `webhooks` function. They authenticate
 * by signature, which the domain code verifies against the organization's secret; the middleware only
 * routes them.
 */

const group = 'webhooks';
const tags = ['Inbound webhooks'];

/**
 * Documents a payload without checking it in the middleware. The request middleware runs before the
 * route function, and a schema there would answer an unsigned request of the wrong shape with a 400:
 * processing before verifying, and telling a forger about the payload. The domain checks the same
 * schema once the signature holds.
 */
const documentedPayload = (schema: z.ZodType, description: string) =>
  z
    .custom<unknown>(() => true)
    .meta({ ...(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }) as object), description });

const orgQuery = z.object({
  org: z.string().optional().meta({
    description:
      'The organization the webhook belongs to (required). A missing or unknown organization fails verification: 401.',
  }),
});

const WebhookAction = z
  .object({
    type: z.string().meta({
      description:
        'deployment.recorded, deploy_pipeline.started (id: the execution id), deploy_pipeline.failed_to_start, ' +
        'deploy_pipeline.not_configured, job.queued, deployment.updated, alert.created, team.notified, ' +
        'support_request.created, pong or ignored',
    }),
    id: z.string().optional().meta({ description: 'The record created or changed' }),
    status: z.string().optional(),
    detail: z.string().optional(),
  })
  .meta({ id: 'WebhookAction' });

const WebhookReceipt = z
  .object({
    received: z.literal(true),
    event: z.string(),
    duplicate: z.boolean().meta({
      description: 'true when this delivery or event id was processed before; nothing was done again',
    }),
    actions: z.array(WebhookAction).meta({ description: 'What the service did; empty for a duplicate' }),
  })
  .meta({ id: 'WebhookReceipt' });

const COMMON =
  'Every failed verification (unknown organization, no secret configured, missing or malformed header, wrong ' +
  'signature, stale timestamp) answers 401 with the one message "Invalid webhook signature"; the reason is ' +
  'logged, not told. A verified body of the wrong shape is a 400. A repeated id answers 200 with ' +
  '`duplicate: true` and changes nothing. Accepted payloads are stored for 90 days with tokens, secrets, ' +
  'passwords, authorization values, API keys, signatures and email addresses replaced by "[REDACTED]".';

const TIMESTAMPED =
  'Signature: `X-Webhook-Timestamp: <unix seconds>` and `X-Webhook-Signature: v1=<hex HMAC-SHA256(secret, ' +
  'timestamp + "." + raw body)>` (several comma-separated `v1=` values are accepted, for secret rotation). ' +
  'Timestamps more than 5 minutes in the past or in the future fail verification.';

export const gitWebhook = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/webhooks/git',
  auth: 'signature',
  summary: 'Push events from the source-code host',
  description: [
    'Signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, raw body)>` with the organization’s ' +
      'credential `webhook.git.secret`. `X-GitHub-Event` names the event (`ping` answers 200; events other than ' +
      '`push` are acknowledged and ignored); `X-GitHub-Delivery` is the delivery id, processed once (a resent ' +
      'body under a new delivery id counts as the same delivery).',
    'A push to the repository’s default branch records a `pending` deployment (see GET /deployments) and ' +
      'executes the organization’s deploy pipeline (PATCH /tenant-config `deploy_pipeline_id`) with the inputs ' +
      '`repository`, `branch`, `commit_sha`, `deployment_id` and, when the push tells them, `pusher` (the ' +
      'pusher’s name, else the sender’s login) and `compare_url`. The action `deploy_pipeline.started` names ' +
      'the execution (GET /agent-pipelines/{id}/executions/{executionId}); the deployment records it and ' +
      'shows its status. The execution is recorded with the delivery: a repeated delivery never starts a ' +
      'second one. When the pipeline cannot start (the token balance is below its estimate, or its stages ' +
      'reference an input a push does not give) the action is `deploy_pipeline.failed_to_start` and the ' +
      'deployment records why; when none is configured, or the one configured no longer exists, it is ' +
      '`deploy_pipeline.not_configured`. Either way the answer is 200: sending the push again would change ' +
      'nothing.',
    'If that push adds or modifies logo images (a path containing "logo" with an image extension), a ' +
      '`brand-assets` job is queued. Pushes to other branches, tags and branch deletions are acknowledged and ' +
      'ignored.',
    COMMON,
  ].join('\n\n'),
  query: orgQuery,
  body: documentedPayload(GitPushPayload, 'The git host’s push event; only the fields shown are read.'),
  response: WebhookReceipt,
});

export const deployWebhook = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/webhooks/deploy',
  auth: 'signature',
  summary: 'Deployment events from the hosting provider',
  description: [
    `${TIMESTAMPED} Secret: the organization’s credential \`webhook.deploy.secret\`. The body’s \`id\` is ` +
      'processed once.',
    '`deployment.completed` sets the deployment (by `deployment_id`; created when unknown) to `succeeded`. ' +
      '`deployment.failed` sets it to `failed`, opens an alert and emails the organization’s owners and admins. ' +
      'Other types are acknowledged and ignored.',
    COMMON,
  ].join('\n\n'),
  query: orgQuery,
  body: documentedPayload(DeploymentEventPayload, 'A deployment event of the hosting provider.'),
  response: WebhookReceipt,
});

export const chatWebhook = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/webhooks',
  auth: 'signature',
  summary: 'Inbound customer chat messages',
  description: [
    `${TIMESTAMPED} Secret: the organization’s credential \`webhook.chat.secret\`. The message \`id\` is ` +
      'processed once.',
    'The specification leaves the payload open; this service defines it (see the request body). Each message ' +
      'becomes an open support request for the customer-support workflow; agent tasks for it are a later ' +
      'addition, and the response says that no task was created.',
    COMMON,
  ].join('\n\n'),
  query: orgQuery,
  body: documentedPayload(ChatMessagePayload, 'One chat message from a messaging-platform bridge.'),
  response: WebhookReceipt,
});
