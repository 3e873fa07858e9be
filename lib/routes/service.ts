import * as z from 'zod';
import { defineRoute } from '#lib/http/route';

/** Service probes and version: no credential, answered by the `service` function. */

const group = 'service';
const tags = ['Service'];

export const VersionInfo = z
  .object({
    version: z
      .string()
      .regex(/^\d+(\.\d+)*$/)
      .meta({ example: '0.1.0' }),
    uptime: z.number().int().min(0).meta({ description: 'Seconds since this instance started' }),
  })
  .meta({ id: 'VersionInfo' });

export const HealthRecord = z
  .object({
    status: z.enum(['ok', 'error']),
    version: z.string(),
    uptime: z.number().int().min(0),
    db: z.enum(['connected', 'error']),
    cache: z.enum(['connected', 'disconnected', 'not_configured', 'error']),
  })
  .meta({ id: 'HealthRecord' });

export const Readiness = z.object({ ready: z.boolean(), db: z.enum(['connected', 'error']) }).meta({ id: 'Readiness' });

const checkStatus = z.enum(['ok', 'error', 'unknown', 'not_configured']);

export const ArchHealth = z
  .object({
    status: z.enum(['ok', 'degraded']),
    version: z.string(),
    uptime: z.number().int().min(0),
    checks: z.object({
      database: z.object({ status: checkStatus, latency_ms: z.number().int().min(0) }),
      memory: z.object({
        status: checkStatus,
        rss_mb: z.number(),
        heap_used_mb: z.number(),
        heap_limit_mb: z.number(),
      }),
      git: z.object({ status: checkStatus, commit: z.string().nullable() }),
      tunnel: z.object({ status: checkStatus }),
      rate_limits: z.object({ status: checkStatus }),
    }),
  })
  .meta({ id: 'ArchHealth' });

export const PublicHealth = z
  .object({ status: z.enum(['ok', 'error']), version: z.string(), timestamp: z.iso.datetime() })
  .meta({ id: 'PublicHealth' });

export const getVersion = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/version',
  auth: 'none',
  summary: 'Application version and uptime',
  response: VersionInfo,
});

export const getHealth = defineRoute({
  rateLimited: false,
  group,
  tags,
  method: 'GET',
  path: '/health',
  auth: 'none',
  summary: 'Health record',
  description: 'Answers 503 with the same record (`status: error`, `db: error`) when the database is unreachable.',
  response: HealthRecord,
  alsoAnswers: [503],
});

export const getReady = defineRoute({
  rateLimited: false,
  group,
  tags,
  method: 'GET',
  path: '/ready',
  auth: 'none',
  summary: 'Readiness: 200 when the database is connected',
  description: 'Answers 503 with `ready: false` when the database is unreachable.',
  response: Readiness,
  alsoAnswers: [503],
});

export const getArchHealth = defineRoute({
  rateLimited: false,
  group,
  tags,
  method: 'GET',
  path: '/arch-health',
  auth: 'none',
  summary: 'Detailed status: database, memory, git, tunnel, rate limits',
  description: 'Answers 503 with the same record (`status: degraded`) when a check fails.',
  response: ArchHealth,
  alsoAnswers: [503],
});

export const getPublicHealth = defineRoute({
  rateLimited: false,
  group,
  tags: ['Public API'],
  method: 'GET',
  path: '/v1/public/health',
  auth: 'none',
  summary: 'Public health check',
  description: 'Answers 503 with `status: error` when the database is unreachable.',
  response: PublicHealth,
  alsoAnswers: [503],
});
