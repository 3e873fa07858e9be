import * as z from 'zod';
import {
  checksTableMarkdown,
  DEFAULT_TASK_MAX_DURATION_SEC,
  HEARTBEAT_INTERVALS,
  MAX_EXAMPLES,
  SECTIONS,
} from '#lib/compliance/health-checks';
import { MAX_AGENTS, MAX_EXECUTIONS, MAX_PRODUCTS, MAX_RUNNING_READ, MAX_TASKS } from '#lib/compliance/system-health';
import { defineRoute } from '#lib/http/route';

/** The organization's compliance score: the `system` function. */

const group = 'system';
const tags = ['Monitoring'];

const Example = z.object({ id: z.number().int(), name: z.string() }).meta({ id: 'HealthCheckExample' });

const CheckResult = z
  .object({
    id: z.string(),
    description: z.string(),
    weight: z.number().int().meta({ description: 'The check’s weight within its section (a section’s sum to 100)' }),
    status: z.enum(['passed', 'failed', 'not_applicable']).meta({
      description: '`not_applicable` when there was nothing to check (it then costs nothing)',
    }),
    checked: z.number().int().min(0).meta({ description: 'Items the check looked at' }),
    count: z.number().int().min(0).meta({ description: 'Items that failed it' }),
    penalty: z
      .number()
      .min(0)
      .meta({ description: 'Points of the section’s 100 it costs: `weight × count / checked`' }),
    examples: z.array(Example).meta({ description: `At most ${MAX_EXAMPLES} of the failing items` }),
  })
  .meta({ id: 'HealthCheck' });

const SectionResult = z
  .object({
    score: z.number().int().min(0).max(100),
    weight: z.number().int().meta({ description: 'The section’s share of the organization’s score' }),
    applicable: z.boolean(),
    note: z.string().nullable(),
    checks: z.array(CheckResult),
  })
  .meta({ id: 'HealthSection' });

export const SystemHealthRecord = z
  .object({
    score: z.number().int().min(0).max(100),
    status: z.enum(['healthy', 'degraded', 'unhealthy']),
    failed_checks: z.array(z.string()),
    complete: z
      .boolean()
      .meta({ description: 'False when a read stopped at its bound; the score covers what was read' }),
    checked_at: z.string(),
    sections: z.object(
      Object.fromEntries(SECTIONS.map((section) => [section, SectionResult])) as Record<
        (typeof SECTIONS)[number],
        typeof SectionResult
      >,
    ),
  })
  .meta({ id: 'SystemHealth' });

export const getSystemHealth = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/system/health',
  auth: 'bearer',
  summary: 'The organization’s compliance score, with agent, task, product and file sections',
  description:
    'Every check looks at a population of the organization’s records and costs its section ' +
    '`weight × failing / population` points of 100 (nothing when the population is empty: `not_applicable`). ' +
    'A section’s score is 100 less the costs of its checks, rounded; the organization’s `score` is the ' +
    'sections’ scores weighted by their `weight`, over the sections that apply, rounded. `status` is ' +
    '`healthy` from 90, `degraded` from 70, `unhealthy` below. The file section does not apply: the service ' +
    'keeps no files yet, so it shows 100, `applicable: false`, and counts for nothing.\n\n' +
    `${checksTableMarkdown()}\n\n` +
    `A heartbeat is missed after ${HEARTBEAT_INTERVALS} intervals (the schedule’s, as the scheduler runs it); ` +
    `a task without \`max_duration_seconds\` may stay in progress ${DEFAULT_TASK_MAX_DURATION_SEC} s.\n\n` +
    'The reads are bounded whatever the organization’s size, all side by side: one Query of the agents ' +
    `(at most ${MAX_AGENTS}), one of the status index per status for tasks in progress and blocked (at most ` +
    `${MAX_TASKS} each) and one counting tasks in review (up to ${MAX_TASKS}), one of the products (at most ` +
    `${MAX_PRODUCTS}), one of the running-executions index (at most ${MAX_RUNNING_READ} entries read, the ` +
    `organization’s oldest ${MAX_EXECUTIONS} running executions kept) and then one Query of stages per ` +
    'execution kept. `complete` is false when a read stopped at its bound.',
  response: SystemHealthRecord,
});
