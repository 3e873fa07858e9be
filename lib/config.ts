import * as z from 'zod';
import type { Tier } from '#lib/kernel/context';

/**
 * Every environment variable the service reads, validated once at module scope. A missing or malformed
 * value stops start-up with the variable's name (see `loadConfig`).
 */
const tiers = ['free', 'pro', 'teams', 'enterprise'] as const satisfies readonly Tier[];

const booleanFlag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

/** `https://app.example.com` or `http://localhost:3000`: a scheme, a host and a port, nothing more. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/** As long as a Lambda may run (15 minutes): a longer local run could never finish deployed. */
const LOCAL_RUN_DELAY_MAX_MS = 900_000;
const localRunDelayProblem = `must be a whole number of milliseconds from 0 to ${LOCAL_RUN_DELAY_MAX_MS}`;

const reconcileIntervalProblem = 'must be a whole number of seconds from 1 to 3600';

const configSchema = z
  .object({
    APP_MODE: z.enum(['local', 'aws']).default('local'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    DATA_DIR: z.string().min(1).default('.data'),
    DEFAULT_TIER: z.enum(tiers).default('free'),
    ANONYMOUS_TIER: z.enum(tiers).default('free'),
    RATE_LIMIT_TIER: z.enum(tiers).optional(),
    TABLE_NAME: z.string().min(3).max(255).default('agent-ops-local'),
    DYNAMODB_ENDPOINT: z.url().optional(),
    DYNAMODB_TIMEOUT_MS: z.coerce.number().int().min(100).max(9_000).default(5_000),
    AWS_REGION: z.string().min(1).default('us-east-1'),
    JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    ALLOWED_ORIGINS: z
      .string()
      .refine((list) => list.split(',').every((entry) => entry.trim() === '' || isOrigin(entry.trim())), {
        message: 'must be a comma-separated list of origins such as https://app.example.com (scheme, host, port)',
      })
      .optional(),
    STRIPE_SECRET_KEY: z.string().optional(),
    STRIPE_WEBHOOK_SECRET: z.string().optional(),
    VALIDATE_RESPONSES: booleanFlag.default(false),
    GIT_SHA: z.string().optional(),
    EMAIL_FROM: z.email().default('no-reply@localhost.localdomain'),
    KMS_KEY_ID: z.string().min(1).optional(),
    LOCAL_MASTER_KEY: z.string().optional(),
    PASSWORD_SCRYPT_LOG_N: z.coerce.number().int().min(10).max(20).default(17),
    HEALTH_CHECK_TIMEOUT_MS: z.coerce.number().int().positive().default(1500),
    WEBHOOK_QUEUE_URL: z.url().optional(),
    PIPELINE_QUEUE_URL: z.url().optional(),
    ALLOW_PRIVATE_WEBHOOK_TARGETS: booleanFlag.optional(),
    AGENT_RUNNER: z.enum(['local', 'provider']).optional(),
    AGENT_RUN_TIMEOUT_MS: z.coerce.number().int().min(1000).max(900_000).default(120_000),
    BEDROCK_MODEL_ID: z.string().optional(),
    LOCAL_RUN_DELAY_MS: z
      .string()
      .regex(/^\d+$/, { message: localRunDelayProblem })
      .transform(Number)
      .refine((ms) => ms <= LOCAL_RUN_DELAY_MAX_MS, { message: localRunDelayProblem })
      .optional(),
    PIPELINE_RECONCILE_INTERVAL_SEC: z
      .string()
      .regex(/^\d+$/, { message: reconcileIntervalProblem })
      .transform(Number)
      .refine((sec) => sec >= 1 && sec <= 3600, { message: reconcileIntervalProblem })
      .optional(),
    SCHEDULE_GROUP: z.string().min(1).max(64).default('agent-ops'),
    AGENT_TICK_ARN: z.string().min(1).optional(),
    SCHEDULER_ROLE_ARN: z.string().min(1).optional(),
    LOG_GROUP_PREFIX: z.string().min(1).max(512).optional(),
    DISCOVERY_QUEUE_URL: z.url().optional(),
    DISCOVERY_RUN_ARN: z.string().min(1).optional(),
    BACKUP_BUCKET: z.string().min(3).max(63).optional(),
  })
  .transform((env) => ({
    mode: env.APP_MODE,
    port: env.PORT,
    dataDir: env.DATA_DIR,
    defaultTier: env.DEFAULT_TIER,
    anonymousTier: env.ANONYMOUS_TIER,
    /** When set, every caller gets this tier's rate limits (tests and benchmarks use enterprise). */
    rateLimitTier: env.RATE_LIMIT_TIER,
    tableName: env.TABLE_NAME,
    dynamoEndpoint: env.DYNAMODB_ENDPOINT,
    /**
     * How long one DynamoDB call may take before it is abandoned (and retried, at most three attempts in
     * all): a database that accepts connections and never answers costs a request seconds and a 503, not
     * the function's whole timeout. Three attempts of the largest value fit in the HTTP functions' 29 s.
     */
    dynamoTimeoutMs: env.DYNAMODB_TIMEOUT_MS,
    region: env.AWS_REGION,
    jwtSecret: env.JWT_SECRET,
    allowedOrigins: (env.ALLOWED_ORIGINS ?? `http://localhost:${env.PORT},http://127.0.0.1:${env.PORT}`)
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    stripeSecretKey: env.STRIPE_SECRET_KEY,
    stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET,
    validateResponses: env.VALIDATE_RESPONSES,
    gitSha: env.GIT_SHA,
    emailFrom: env.EMAIL_FROM,
    kmsKeyId: env.KMS_KEY_ID,
    localMasterKey: env.LOCAL_MASTER_KEY,
    healthCheckTimeoutMs: env.HEALTH_CHECK_TIMEOUT_MS,
    /** The scrypt cost of new password hashes, as log2 N (17: OWASP's minimum, N = 131072). */
    passwordScryptLogN: env.PASSWORD_SCRYPT_LOG_N,
    /** The SQS queue of outbound webhook deliveries (aws mode; local mode uses the in-process queue). */
    webhookQueueUrl: env.WEBHOOK_QUEUE_URL,
    /** The SQS queue of pipeline stages, one message per ready stage (aws mode). */
    pipelineQueueUrl: env.PIPELINE_QUEUE_URL,
    // Local mode delivers to receivers on this machine (127.0.0.1, private networks); a deployment must
    // opt in, since a tenant-chosen URL could otherwise reach the VPC or the metadata endpoint.
    allowPrivateWebhookTargets: env.ALLOW_PRIVATE_WEBHOOK_TARGETS ?? env.APP_MODE === 'local',
    /**
     * Who runs agents: the deterministic local runner (no network; the default locally) or a model
     * provider (the organization's LLM integration, else Bedrock in aws mode; the default there).
     */
    agentRunner: env.AGENT_RUNNER ?? (env.APP_MODE === 'aws' ? 'provider' : 'local'),
    /** How long one model call may take before it is abandoned (and retried once more at most). */
    agentRunTimeoutMs: env.AGENT_RUN_TIMEOUT_MS,
    /** The Bedrock model of organizations without an LLM integration (aws mode, IAM; no key). */
    bedrockModelId: env.BEDROCK_MODEL_ID || undefined,
    /**
     * How long each run of the local runner takes before it answers (0: at once), so that local runs can
     * be watched `running`, cancelled or interrupted as slow model calls would be.
     */
    localRunDelayMs: env.LOCAL_RUN_DELAY_MS ?? 0,
    /**
     * Local mode: seconds between the pipeline reconciler's runs under `npm start`, instead of
     * serverless.yml's minute (EventBridge's shortest rate), so that a stage left running by a crash is
     * taken up soon after its time limit and margin.
     */
    pipelineReconcileIntervalSec: env.PIPELINE_RECONCILE_INTERVAL_SEC,
    /** EventBridge Scheduler: the group agent schedules live in, their target and the role it assumes. */
    scheduleGroup: env.SCHEDULE_GROUP,
    agentTickArn: env.AGENT_TICK_ARN,
    schedulerRoleArn: env.SCHEDULER_ROLE_ARN,
    /** aws mode: the shared beginning of the functions' log group names, read back by GET /logs. */
    logGroupPrefix: env.LOG_GROUP_PREFIX,
    /** The SQS queue of discovery engine runs asked for by POST /discovery-engines/{slug}/run (aws mode). */
    discoveryQueueUrl: env.DISCOVERY_QUEUE_URL,
    /** The function each discovery engine's EventBridge schedule invokes (the `discovery-run` target). */
    discoveryRunArn: env.DISCOVERY_RUN_ARN,
    /** aws mode: the S3 bucket organization backups are written to (infra/aws/backups.yml). */
    backupBucket: env.BACKUP_BUCKET,
  }));

export type Config = z.output<typeof configSchema>;
export type { Tier };

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
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
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  return result.data;
}

export const config: Config = loadConfig(process.env);
