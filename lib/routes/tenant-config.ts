import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { pagingQuery } from '#lib/http/schemas';
import { DELIVERY_ID_PATTERN, DELIVERY_STATUSES, WEBHOOK_EVENTS } from '#lib/webhooks/outbound/event-types';

/**
 * The organization's configuration: outbound webhooks (URLs per event, the signing secret, the delivery
 * log) and the deploy pipeline that a push to the default branch runs.
 */

const group = 'tenant-config';
const tags = ['Tenant configuration'];

const ADMINS = 'Organization admins and owners only (403 for other members).';

const EVENTS = WEBHOOK_EVENTS.map((event) => `\`${event}\``).join(', ');

const webhookUrl = z
  .string()
  .max(2048)
  .meta({
    description:
      'Absolute https URL (http only where the deployment allows private targets, as local mode does), without ' +
      'user:password, at most 2048 characters. Unless the deployment allows private targets, a literal IP in a ' +
      'private, loopback, link-local, unique-local, carrier-grade NAT, multicast, reserved or unspecified range ' +
      'is refused, as are `localhost`, a name of one label and the names of private networks (`.internal`, ' +
      '`.local`, `.localdomain`, `.home.arpa`, `.corp`, `.home`, `.lan`, `.intranet`); a name that resolves to ' +
      'such an address is refused before each delivery attempt. Stored as the URL parser normalizes it.',
    example: 'https://hooks.example.com/agent-ops',
  });

const WebhookTargets = z
  .object(
    Object.fromEntries(
      WEBHOOK_EVENTS.map((event) => [
        event,
        z
          .string()
          .nullable()
          .meta({ description: `URL for ${event}` }),
      ]),
    ) as Record<(typeof WEBHOOK_EVENTS)[number], z.ZodNullable<z.ZodString>>,
  )
  .meta({ id: 'WebhookTargets', description: 'The registered URL of every event; null where none is.' });

export const TenantConfigRecord = z
  .object({
    webhooks: WebhookTargets,
    signing_secret: z
      .string()
      .nullable()
      .meta({
        description:
          'Standard Webhooks secret (`whsec_` + base64 of 24 random bytes), created on first use. Shown to ' +
          'organization admins and owners only; null for everyone else.',
        example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      }),
    deploy_pipeline_id: z
      .number()
      .int()
      .nullable()
      .meta({
        description:
          'The agent pipeline a push to the repository’s default branch runs (POST /webhooks/git), or null ' +
          'when none is configured. A pipeline deleted since stays named here; pushes then report that it no ' +
          'longer exists.',
      }),
    updated_at: z.string().nullable().meta({ description: 'Null until the configuration is first changed' }),
  })
  .meta({ id: 'TenantConfig' });

const DeliveryAttemptRecord = z
  .object({
    at: z.string(),
    status_code: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Null when no response arrived (refused target, network error, timeout)' }),
    duration_ms: z.number().int().min(0),
    error: z.string().nullable().meta({ description: 'Null for a 2xx answer' }),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

export const WebhookDeliveryRecord = z
  .object({
    id: z.string().meta({ description: 'Also sent as the `webhook-id` header, the same on every attempt' }),
    event_type: z.enum([...WEBHOOK_EVENTS, 'test']),
    url: z.string().meta({ description: 'The URL registered when the event was published' }),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.array(DeliveryAttemptRecord).meta({ description: 'Every attempt so far, oldest first' }),
    next_attempt_at: z
      .string()
      .nullable()
      .meta({ description: 'When the next attempt is due while pending; null once finished' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });

const WebhookDeliveryWithPayload = WebhookDeliveryRecord.extend({
  payload: z.unknown().meta({ description: 'The JSON body sent: `{ type, timestamp, data }`' }),
}).meta({ id: 'WebhookDeliveryWithPayload' });

const DELIVERY_CONTRACT = [
  'Outbound requests follow Standard Webhooks: `POST` of `{ type, timestamp, data }` (`timestamp` ISO 8601, ' +
    '`data` the record concerned and, where there is one, its `tokens_used`) with ' +
    '`content-type: application/json`, `webhook-id` (the delivery id), `webhook-timestamp` (unix seconds of the ' +
    'attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" keyed ' +
    'with the base64-decoded part of the secret after whsec_>`.',
  'A 2xx answer within 10 seconds is a success; anything else (3xx included: redirects are not followed) is a ' +
    'failed attempt. Six attempts in all: at once, then after 5 s, 30 s, 2 min, 10 min and 15 min; then the ' +
    'delivery is `failed`. Each attempt is signed afresh with the secret current at that moment.',
  'Before every attempt the host is resolved and, unless the deployment allows private targets, refused (a ' +
    'failed attempt, no request sent) when any address is private, loopback, link-local, unique-local, ' +
    'carrier-grade NAT or otherwise not public.',
].join(' ');

export const getTenantConfig = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/tenant-config',
  auth: 'bearer',
  summary: 'The organization’s outbound webhook configuration (addition: response shape)',
  description:
    `Every event (${EVENTS}) with its URL or null, the signing secret and \`updated_at\`. Any member may read ` +
    'the URLs; the secret is shown to organization admins and owners only (null for others), is created on first ' +
    `read, and each read that shows it is recorded in the activity log. ${DELIVERY_CONTRACT}`,
  response: TenantConfigRecord,
});

const WebhookChanges = z.strictObject(
  Object.fromEntries(WEBHOOK_EVENTS.map((event) => [event, webhookUrl.nullable().optional()])) as Record<
    (typeof WEBHOOK_EVENTS)[number],
    z.ZodOptional<z.ZodNullable<typeof webhookUrl>>
  >,
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown event ${issue.keys.map((key) => `"${key}"`).join(', ')}; events are ${WEBHOOK_EVENTS.join(', ')}`
        : undefined,
  },
);

const DEPLOY_PIPELINE =
  '`deploy_pipeline_id` names the agent pipeline that a push to the repository’s default branch runs (see POST ' +
  '/webhooks/git), or null to remove it; it must be a pipeline of the organization (400 otherwise). Each such ' +
  'push executes it with the inputs `repository`, `branch`, `commit_sha`, `deployment_id` and, when the push ' +
  'tells them, `pusher` and `compare_url`; its stages may reference any of these as `{{input.<field>}}` ' +
  '(inputs a stage does not reference are kept on the execution and otherwise unused).';

export const updateTenantConfig = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/tenant-config',
  auth: 'bearer',
  summary: 'Register or remove outbound webhook URLs; set the deploy pipeline',
  description:
    `${ADMINS} \`webhooks\` maps events (${EVENTS}) to a URL, or to null to remove it; events not named keep ` +
    'their URL. Unknown event keys and invalid URLs are a 400 naming each one, and nothing is changed. ' +
    `${DEPLOY_PIPELINE} The body names \`webhooks\`, \`deploy_pipeline_id\` or both (an addition to the ` +
    'specification, whose body has `webhooks` only). Answers ' +
    'the whole configuration, secret included (created if there was none). Events published before a change are ' +
    'still delivered to the URL they were published for. Unless the deployment allows private targets, a host that ' +
    'is `localhost` or a name under it (in any case, with or without a trailing dot) or a non-public IP address in ' +
    'any spelling (decimal, hex, octal, short, IPv4-mapped IPv6) is refused here; any other name is resolved once ' +
    'before each delivery, which is refused if any address is not public and otherwise connects to the address ' +
    'checked.',
  body: z
    .object({
      webhooks: WebhookChanges.optional(),
      deploy_pipeline_id: z
        .number()
        .int()
        .min(1)
        .nullable()
        .optional()
        .meta({ description: 'A pipeline id of the organization, or null to remove the deploy pipeline' }),
    })
    .refine((body) => body.webhooks !== undefined || body.deploy_pipeline_id !== undefined, {
      path: ['webhooks'],
      message: 'name webhooks, deploy_pipeline_id or both',
    }),
  response: TenantConfigRecord,
});

export const rotateWebhookSecret = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/tenant-config/webhook-secret/rotate',
  auth: 'bearer',
  summary: 'Replace the webhook signing secret (addition to the specification)',
  description:
    `${ADMINS} Answers the configuration with the new secret. The old secret stops signing at once, with no ` +
    'overlap: every attempt from now on, including retries of events published earlier, is signed with the new ' +
    "one, so update the receiver's secret right away (a receiver can accept both secrets while it switches). " +
    'Concurrent rotations: the last one wins; GET shows the current secret.',
  response: TenantConfigRecord,
});

export const sendTestWebhook = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/tenant-config/webhooks/test',
  auth: 'bearer',
  summary: 'Send a test event to a registered URL (addition to the specification)',
  description:
    `${ADMINS} Queues a \`test\` event (\`data: { event, organization_id, message }\`) to the URL of \`event\`, ` +
    `or, without \`event\`, of the first event in the order ${EVENTS} that has one, and answers 202 with the ` +
    'pending delivery at once (the body may be omitted) (follow it at GET ' +
    '/tenant-config/webhook-deliveries/{id}). 400 when the named event has no URL; 404 when no URL is registered ' +
    'at all.',
  body: z.object({ event: z.enum(WEBHOOK_EVENTS).optional() }).optional(),
  response: WebhookDeliveryRecord,
  status: 202,
  errors: [404],
});

export const listWebhookDeliveries = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/tenant-config/webhook-deliveries',
  auth: 'bearer',
  summary: 'The outbound webhook delivery log, newest first (addition to the specification)',
  description:
    'Deliveries of the organization the request acts in, newest first, each with all its attempts (without the ' +
    'body; see the single delivery). Any member may read it. Records are kept for 30 days. `status` keeps one ' +
    'status.',
  query: pagingQuery.extend({ status: z.enum(DELIVERY_STATUSES).optional() }),
  envelope: 'list',
  response: WebhookDeliveryRecord,
});

export const getWebhookDelivery = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/tenant-config/webhook-deliveries/{id}',
  auth: 'bearer',
  summary: 'One outbound webhook delivery with its attempts and body (addition to the specification)',
  description: 'A delivery of another organization answers 404.',
  params: z.object({ id: z.string().regex(DELIVERY_ID_PATTERN, 'not a delivery id') }),
  response: WebhookDeliveryWithPayload,
});
