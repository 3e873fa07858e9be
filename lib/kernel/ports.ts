/**
 * Ports: what the domain needs from the outside world. Implementations live beside each other in
 * `lib/adapters/aws` and `lib/adapters/local`; a port never imports its adapters. The domain reaches
 * every port one way only, `ctx.ports`, which the composition root (`lib/app`) builds once per cold
 * start and tests build with their own implementations.
 */

/** Time, injectable so that tests can move it (key rotation grace, token expiry, leases). */
export interface Clock {
  now(): Date;
}

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends one email (invites, password resets, alerts). */
export interface EmailSender {
  send(message: EmailMessage): Promise<void>;
}

/** Context that binds a wrapped data key to what it protects (KMS EncryptionContext). */
export type KeyContext = Record<string, string>;

/**
 * Key management for envelope encryption: a fresh data key per write, wrapped by a master key that
 * never leaves the key service (AWS KMS) or the local key file.
 */
export interface KeyManagement {
  /** A new 32-byte data key, in plain and wrapped form, and the id of the master key that wrapped it. */
  generateDataKey(context: KeyContext): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array; keyId: string }>;
  /** Unwraps a data key; throws when the key id, context or wrapped bytes do not match. */
  decryptDataKey(wrapped: Uint8Array, keyId: string, context: KeyContext): Promise<Uint8Array>;
}

/** The queues the service sends to; each name maps to one SQS queue (aws) or local queue. */
export type QueueName = 'webhook-delivery' | 'pipeline-stage' | 'discovery-run';

/**
 * Sends a message to a queue for a consumer function to process later. `send` resolves once the queue
 * has accepted the message, never after it is processed; the body must be JSON-serializable.
 */
export interface MessageQueue {
  /** `delaySeconds` holds the message back before its first delivery (SQS allows at most 900). */
  send(queue: QueueName, body: unknown, options?: { delaySeconds?: number }): Promise<void>;
}

/**
 * A price as the provider charges it, resolved by the billing domain from its catalogue: the provider
 * turns it into its own line item and never looks a price up itself.
 */
export interface PriceLine {
  /** What the customer sees on the payment page, e.g. `Pro plan`. */
  name: string;
  /** In the currency's smallest unit (cents). */
  amountCents: number;
  currency: string;
  /** Set for a subscription: charged again every interval. Absent for a one-time payment. */
  interval?: 'month';
  /** Kept by the provider on the product it charges for (`{ tier: 'pro' }`), for its own dashboard. */
  metadata: Record<string, string>;
}

/** What a checkout sells, with its price: a subscription tier (recurring) or a token package (one payment). */
export type CheckoutItem = ({ kind: 'tier'; tier: string } | { kind: 'package'; package: string }) & {
  price: PriceLine;
};

export interface CheckoutSession {
  id: string;
  /** Where the customer pays: the provider's hosted page, or the local checkout page. */
  url: string;
}

export interface PaymentIntent {
  id: string;
  client_secret: string;
  amount: number;
  currency: string;
  status: string;
}

/**
 * The payment provider (Stripe in aws mode, a local stand-in otherwise). The billing domain resolves
 * prices and token counts from its catalogue and hands them over; the provider only turns them into
 * sessions and intents. Completed payments come back through the signed payments webhook, never through
 * these calls' answers.
 */
export interface PaymentsProvider {
  readonly kind: 'stripe' | 'local';
  createCheckoutSession(
    input: { orgId: string; successUrl: string; cancelUrl: string } & CheckoutItem,
  ): Promise<CheckoutSession>;
  createPortalSession(input: { orgId: string; customerId: string; returnUrl: string }): Promise<{ url: string }>;
  /**
   * The organization's customer at the provider, made when it has none yet (`org_id` in its metadata).
   * The provider deduplicates on the organization, so two calls answer the same customer.
   */
  createCustomer(input: { orgId: string; name: string }): Promise<{ customerId: string }>;
  /**
   * An intent to pay for a token package (`package`, its slug, is written into the intent's metadata for
   * the payments webhook). The same `idempotencyKey` answers the same intent (the provider deduplicates).
   */
  createPaymentIntent(input: {
    orgId: string;
    package: string;
    amountCents: number;
    currency: string;
    idempotencyKey: string;
  }): Promise<PaymentIntent>;
}

/** Secret material the service is configured with (never logged, never in a response). */
export interface Secrets {
  /** The HS256 key of access tokens. */
  readonly accessTokenKey: Uint8Array;
  /** The secret that signs payment webhooks (Stripe's `whsec_…`, or the local provider's). */
  readonly paymentsWebhookSecret: string;
}

/** What a schedule starts: each name maps to one function (EventBridge target, or the local driver's). */
export type ScheduleTarget = 'agent-tick' | 'discovery-run';

/** A recurring schedule as the domain asks for it. */
export interface ScheduleSpec {
  /** Unique in the instance, at most 64 characters of `[0-9A-Za-z._-]` (e.g. `agent-<org>-<agent id>`). */
  name: string;
  target: ScheduleTarget;
  /** The event the target receives on every run; JSON-serializable. */
  payload: Record<string, unknown>;
  /** Seconds between runs, as asked for. */
  intervalSec: number;
  enabled: boolean;
}

/** A schedule as the scheduler runs it. */
export interface ScheduleState {
  /** `rate(5 minutes)` (EventBridge), `rate(5 seconds)` (local). */
  expression: string;
  enabled: boolean;
  /** Seconds between runs as the scheduler runs them (EventBridge rounds up to whole minutes). */
  intervalSec: number;
  /** Set when the schedule differs from what was asked for, saying how. */
  note?: string;
}

/**
 * Recurring schedules (EventBridge Scheduler in aws mode; the table and timers locally). Every call is
 * idempotent: `put` creates or replaces, `setEnabled` and `remove` of an unknown schedule do nothing.
 */
export interface Scheduler {
  readonly kind: 'eventbridge' | 'local';
  put(spec: ScheduleSpec): Promise<ScheduleState>;
  setEnabled(name: string, enabled: boolean): Promise<void>;
  remove(name: string): Promise<void>;
}

/** Who runs: the parts of an agent a run's prompt is built from. */
export interface AgentProfile {
  name: string;
  model: string | null;
  identity: string;
  soul_content: string;
  core_rules: string;
  tools: string[];
}

/** Where a provider runner connects: the organization's LLM integration, read by the domain. */
export interface RunnerConnection {
  baseUrl: string;
  apiKey: string;
  model?: string;
  /**
   * The address the base URL's host resolved to when it was checked: the call connects there and
   * nowhere else. Absent where the deployment allows private targets (the host is resolved as usual).
   */
  address?: { address: string; family: 4 | 6 };
}

export interface AgentRunRequest {
  orgId: string;
  agent: AgentProfile;
  /** The work to do, in words: a task's title and description, or a pipeline stage's instructions. */
  instructions: string;
  /** Structured input (the task record, a stage's variables); JSON-serializable. */
  input: Record<string, unknown>;
  /** Upper bound on the tokens the answer may use. */
  maxTokens?: number;
  connection?: RunnerConnection;
}

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export interface AgentRunResult {
  /** The run's answer as an object (`{ summary, ... }`). */
  output: Record<string, unknown>;
  usage: TokenUsage;
  /** The model that answered. */
  model: string;
}

/**
 * Runs an agent once on some work: a model provider (OpenAI-compatible endpoints, Bedrock) or the
 * deterministic local runner. A failed run throws `AgentRunError` (lib/errors) saying why, without
 * secrets; `retryable` tells whether the same request may succeed later.
 */
export interface AgentRunner {
  readonly kind: 'local' | 'provider';
  run(request: AgentRunRequest): Promise<AgentRunResult>;
}

/**
 * One line of the service's own log output as a log source read it: the JSON object the logger wrote
 * (`level`, `message`, `timestamp`, `service`, and the line's own fields).
 */
export interface ServiceLogEntry {
  /** Stable for the same line: a CloudWatch event id, or a digest of the local line. */
  id: string;
  /** The file or log group the line was read from. */
  origin: string;
  /** When the line was written, epoch milliseconds. */
  time: number;
  record: Record<string, unknown>;
}

export interface ServiceLogQuery {
  /**
   * The organization asking. A source answers only lines that name it in their `org_id` or `orgId`
   * field (lib/kernel/service-log.ts), never a line of another organization or of none.
   */
  orgId: string;
  /** Further filtering of the organization's lines (level, agent, text), applied as lines are read. */
  keep: (record: Record<string, unknown>) => boolean;
  /** At most this many lines, the newest. */
  limit: number;
}

export interface ServiceLogRead {
  /** Newest first. */
  entries: ServiceLogEntry[];
  /** False when the source stopped at its reading bound with older lines left unread. */
  complete: boolean;
}

/** A log file (local) or log group (CloudWatch) the service writes to. */
export interface ServiceLogFile {
  name: string;
  kind: 'file' | 'log_group';
  size_bytes: number;
  /** ISO time of the last write, or null when the source cannot tell. */
  last_modified: string | null;
}

/**
 * The service's own log output, read back (GET /logs, source `file`): files under DATA_DIR/logs that
 * the local runtime writes, or the functions' CloudWatch log groups. Every read is bounded (bytes or
 * calls) and says when the bound cut it short.
 */
export interface LogSource {
  readonly kind: 'file' | 'cloudwatch';
  read(query: ServiceLogQuery): Promise<ServiceLogRead>;
  files(): Promise<ServiceLogFile[]>;
}

/** A stored file as the blob store describes it. */
export interface BlobInfo {
  key: string;
  size: number;
  /** ISO time of the last write. */
  lastModified: string;
}

/**
 * Files kept beside the table (organization backups): an S3 bucket in aws mode, a folder under DATA_DIR
 * locally. A key is `/`-separated segments of `[A-Za-z0-9._-]`, none empty, `.` or `..` (lib/kernel/blob-key.ts):
 * every adapter refuses any other key before it touches storage, so a key can never name a place outside
 * the store. `put` replaces what the key held; `get` and `head` of an absent key answer undefined;
 * `delete` of one does nothing.
 */
export interface BlobStore {
  readonly kind: 's3' | 'local';
  /**
   * Stores the bytes `body` yields, read once and as they come (never held whole): the key holds the new
   * file only once every byte is stored, and nothing of it when `body` or the store fails.
   */
  put(key: string, body: AsyncIterable<Uint8Array>, options: { contentType: string }): Promise<{ size: number }>;
  /** The file's bytes as a stream, or undefined when the key holds none. */
  get(key: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  head(key: string): Promise<BlobInfo | undefined>;
  /**
   * The files directly in a folder (`prefix` ends with `/`), at most `limit` of them in key order;
   * `complete` is false when more were left unread.
   */
  list(prefix: string, limit: number): Promise<{ items: BlobInfo[]; complete: boolean }>;
  delete(key: string): Promise<void>;
}

/**
 * Resolves a host name to every address it has (as `dns.lookup` with `all: true`), for the checks of
 * outbound targets that a tenant chooses: a name is judged by what it resolves to when it is called.
 */
export interface HostResolver {
  lookup(host: string): Promise<Array<{ address: string; family: number }>>;
}

/** Every port a domain function may use. A function's entry point wires only those its routes need. */
export interface Ports {
  clock: Clock;
  email: EmailSender;
  keys: KeyManagement;
  queue: MessageQueue;
  payments: PaymentsProvider;
  secrets: Secrets;
  scheduler: Scheduler;
  runner: AgentRunner;
  logs: LogSource;
  blobs: BlobStore;
  resolver: HostResolver;
}
