import type { Tier } from '#lib/kernel/context';

/**
 * Every environment variable the service reads, validated once at module scope. A missing or malformed
 * value stops start-up with the variable's name (see `loadConfig`). Read with plain checks, not a zod
 * schema: this runs at every cold start of every function, where building the schema and warming zod up
 * cost more than the function's own route schemas (bench/bundles.ts measures the import).
 */
const TIERS = ['free', 'pro', 'teams', 'enterprise'] as const satisfies readonly Tier[];

/** As long as a Lambda may run (15 minutes): a longer local run could never finish deployed. */
const LOCAL_RUN_DELAY_MAX_MS = 900_000;

export interface Config {
  mode: 'local' | 'aws';
  port: number;
  dataDir: string;
  defaultTier: Tier;
  anonymousTier: Tier;
  /** When set, every caller gets this tier's rate limits (tests and benchmarks use enterprise). */
  rateLimitTier: Tier | undefined;
  tableName: string;
  dynamoEndpoint: string | undefined;
  /**
   * How long one DynamoDB call may take before it is abandoned (and retried, at most three attempts in
   * all): a database that accepts connections and never answers costs a request seconds and a 503, not
   * the function's whole timeout. Three attempts of the largest value fit in the HTTP functions' 29 s.
   */
  dynamoTimeoutMs: number;
  region: string;
  jwtSecret: string | undefined;
  allowedOrigins: string[];
  stripeSecretKey: string | undefined;
  stripeWebhookSecret: string | undefined;
  validateResponses: boolean;
  gitSha: string | undefined;
  emailFrom: string;
  kmsKeyId: string | undefined;
  localMasterKey: string | undefined;
  healthCheckTimeoutMs: number;
  /** The scrypt cost of new password hashes, as log2 N (17: OWASP's minimum, N = 131072). */
  passwordScryptLogN: number;
  /** The SQS queue of outbound webhook deliveries (aws mode; local mode uses the in-process queue). */
  webhookQueueUrl: string | undefined;
  /** The SQS queue of pipeline stages, one message per ready stage (aws mode). */
  pipelineQueueUrl: string | undefined;
  // Local mode delivers to receivers on this machine (127.0.0.1, private networks); a deployment must
  // opt in, since a tenant-chosen URL could otherwise reach the VPC or the metadata endpoint.
  allowPrivateWebhookTargets: boolean;
  /**
   * Who runs agents: the deterministic local runner (no network; the default locally) or a model
   * provider (the organization's LLM integration, else Bedrock in aws mode; the default there).
   */
  agentRunner: 'local' | 'provider';
  /** How long one model call may take before it is abandoned (and retried once more at most). */
  agentRunTimeoutMs: number;
  /** The Bedrock model of organizations without an LLM integration (aws mode, IAM; no key). */
  bedrockModelId: string | undefined;
  /**
   * How long each run of the local runner takes before it answers (0: at once), so that local runs can
   * be watched `running`, cancelled or interrupted as slow model calls would be.
   */
  localRunDelayMs: number;
  /**
   * Local mode: seconds between the pipeline reconciler's runs under `npm start`, instead of
   * serverless.yml's minute (EventBridge's shortest rate), so that a stage left running by a crash is
   * taken up soon after its time limit and margin.
   */
  pipelineReconcileIntervalSec: number | undefined;
  /** EventBridge Scheduler: the group agent schedules live in, their target and the role it assumes. */
  scheduleGroup: string;
  agentTickArn: string | undefined;
  schedulerRoleArn: string | undefined;
  /** aws mode: the shared beginning of the functions' log group names, read back by GET /logs. */
  logGroupPrefix: string | undefined;
  /** The SQS queue of discovery engine runs asked for by POST /discovery-engines/{slug}/run (aws mode). */
  discoveryQueueUrl: string | undefined;
  /** The function each discovery engine's EventBridge schedule invokes (the `discovery-run` target). */
  discoveryRunArn: string | undefined;
  /** aws mode: the S3 bucket organization backups are written to (infra/aws/backups.yml). */
  backupBucket: string | undefined;
}

export type { Tier };

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * The same address syntax zod's `z.email()` accepts (its default pattern), so that EMAIL_FROM means
 * what it meant when a schema checked it.
 */
const EMAIL = /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/;

/** `https://app.example.com` or `http://localhost:3000`: a scheme, a host and a port, nothing more. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/**
 * Reads the variables of one environment, collecting every problem (`NAME: what it must be`) instead of
 * stopping at the first. A variable that is set, even to an empty string, is checked; only an unset one
 * takes its default.
 */
class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Record<string, string | undefined>) {}

  private refuse(name: string, problem: string): undefined {
    this.problems.push(`${name}: ${problem}`);
    return undefined;
  }

  /** A string of `min` to `max` characters. */
  string(name: string, limits: { min?: number; max?: number; problem?: string } = {}): string | undefined {
    const value = this.env[name];
    if (value === undefined) return undefined;
    const { min = 0, max = Number.POSITIVE_INFINITY } = limits;
    if (value.length < min || value.length > max) {
      const size = max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min} to ${max}`;
      return this.refuse(name, limits.problem ?? `must be ${size} characters`);
    }
    return value;
  }

  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const value = this.env[name];
    if (value === undefined) return undefined;
    if ((values as readonly string[]).includes(value)) return value as T;
    return this.refuse(name, `must be one of ${values.join(', ')}`);
  }

  /** A whole number from `min` to `max`, written as JavaScript reads a number (`Number(value)`). */
  integer(name: string, min: number, max: number): number | undefined {
    const value = this.env[name];
    if (value === undefined) return undefined;
    const number = Number(value);
    if (Number.isInteger(number) && number >= min && number <= max) return number;
    return this.refuse(name, `must be a whole number from ${min} to ${max}`);
  }

  /** A whole number from `min` to `max` written in decimal digits only, or `problem`. */
  digits(name: string, min: number, max: number, problem: string): number | undefined {
    const value = this.env[name];
    if (value === undefined) return undefined;
    const number = Number(value);
    if (/^\d+$/.test(value) && number >= min && number <= max) return number;
    return this.refuse(name, problem);
  }

  /** An absolute URL, trimmed, without the tabs and line breaks a URL parser would drop. */
  url(name: string): string | undefined {
    const value = this.env[name]?.trim();
    if (value === undefined) return undefined;
    if (URL.canParse(value)) return value.replace(/[\t\n\r]/g, '');
    return this.refuse(name, 'must be an absolute URL');
  }

  email(name: string): string | undefined {
    const value = this.env[name];
    if (value === undefined) return undefined;
    return EMAIL.test(value) ? value : this.refuse(name, 'must be an email address');
  }

  /** `true`, `false`, `1` or `0`. */
  flag(name: string): boolean | undefined {
    const value = this.oneOf(name, ['true', 'false', '1', '0']);
    return value === undefined ? undefined : value === 'true' || value === '1';
  }

  /** A comma-separated list of origins; empty entries are skipped. */
  origins(name: string): string[] | undefined {
    const value = this.env[name];
    if (value === undefined) return undefined;
    const entries = value.split(',').map((entry) => entry.trim());
    if (entries.every((entry) => entry === '' || isOrigin(entry))) return entries.filter(Boolean);
    return this.refuse(
      name,
      'must be a comma-separated list of origins such as https://app.example.com (scheme, host, port)',
    );
  }
}

/**
 * Parses a set of environment variables into the service configuration.
 *
 * @example
 * loadConfig({ PORT: '4000' }).port // 4000
 * loadConfig({ PORT: 'x' }) // throws ConfigError: "Invalid configuration: PORT: ..."
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const read = new EnvReader(env);
  const mode = read.oneOf('APP_MODE', ['local', 'aws']) ?? 'local';
  const port = read.integer('PORT', 0, 65535) ?? 3000;
  const localRunDelayProblem = `must be a whole number of milliseconds from 0 to ${LOCAL_RUN_DELAY_MAX_MS}`;
  const config: Config = {
    mode,
    port,
    dataDir: read.string('DATA_DIR', { min: 1 }) ?? '.data',
    defaultTier: read.oneOf('DEFAULT_TIER', TIERS) ?? 'free',
    anonymousTier: read.oneOf('ANONYMOUS_TIER', TIERS) ?? 'free',
    rateLimitTier: read.oneOf('RATE_LIMIT_TIER', TIERS),
    tableName: read.string('TABLE_NAME', { min: 3, max: 255 }) ?? 'agent-ops-local',
    dynamoEndpoint: read.url('DYNAMODB_ENDPOINT'),
    dynamoTimeoutMs: read.integer('DYNAMODB_TIMEOUT_MS', 100, 9_000) ?? 5_000,
    region: read.string('AWS_REGION', { min: 1 }) ?? 'us-east-1',
    jwtSecret: read.string('JWT_SECRET', { min: 32, problem: 'must be at least 32 characters' }),
    allowedOrigins: read.origins('ALLOWED_ORIGINS') ?? [`http://localhost:${port}`, `http://127.0.0.1:${port}`],
    stripeSecretKey: read.string('STRIPE_SECRET_KEY'),
    stripeWebhookSecret: read.string('STRIPE_WEBHOOK_SECRET'),
    validateResponses: read.flag('VALIDATE_RESPONSES') ?? false,
    gitSha: read.string('GIT_SHA'),
    emailFrom: read.email('EMAIL_FROM') ?? 'no-reply@localhost.localdomain',
    kmsKeyId: read.string('KMS_KEY_ID', { min: 1 }),
    localMasterKey: read.string('LOCAL_MASTER_KEY'),
    healthCheckTimeoutMs: read.integer('HEALTH_CHECK_TIMEOUT_MS', 1, Number.MAX_SAFE_INTEGER) ?? 1500,
    passwordScryptLogN: read.integer('PASSWORD_SCRYPT_LOG_N', 10, 20) ?? 17,
    webhookQueueUrl: read.url('WEBHOOK_QUEUE_URL'),
    pipelineQueueUrl: read.url('PIPELINE_QUEUE_URL'),
    allowPrivateWebhookTargets: read.flag('ALLOW_PRIVATE_WEBHOOK_TARGETS') ?? mode === 'local',
    agentRunner: read.oneOf('AGENT_RUNNER', ['local', 'provider']) ?? (mode === 'aws' ? 'provider' : 'local'),
    agentRunTimeoutMs: read.integer('AGENT_RUN_TIMEOUT_MS', 1000, 900_000) ?? 120_000,
    bedrockModelId: read.string('BEDROCK_MODEL_ID') || undefined,
    localRunDelayMs: read.digits('LOCAL_RUN_DELAY_MS', 0, LOCAL_RUN_DELAY_MAX_MS, localRunDelayProblem) ?? 0,
    pipelineReconcileIntervalSec: read.digits(
      'PIPELINE_RECONCILE_INTERVAL_SEC',
      1,
      3600,
      'must be a whole number of seconds from 1 to 3600',
    ),
    scheduleGroup: read.string('SCHEDULE_GROUP', { min: 1, max: 64 }) ?? 'agent-ops',
    agentTickArn: read.string('AGENT_TICK_ARN', { min: 1 }),
    schedulerRoleArn: read.string('SCHEDULER_ROLE_ARN', { min: 1 }),
    logGroupPrefix: read.string('LOG_GROUP_PREFIX', { min: 1, max: 512 }),
    discoveryQueueUrl: read.url('DISCOVERY_QUEUE_URL'),
    discoveryRunArn: read.string('DISCOVERY_RUN_ARN', { min: 1 }),
    backupBucket: read.string('BACKUP_BUCKET', { min: 3, max: 63 }),
  };
  if (read.problems.length > 0) throw new ConfigError(`Invalid configuration: ${read.problems.join('; ')}`);
  return config;
}

export const config: Config = loadConfig(process.env);
