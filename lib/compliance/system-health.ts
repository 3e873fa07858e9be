import { firstAgentItems } from '#lib/agents/agent-records';
import {
  evaluateHealth,
  type HealthSnapshot,
  type SectionName,
  type SectionResult,
} from '#lib/compliance/health-checks';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { runningExecutionsOf, stageItems } from '#lib/pipelines/execution-records';
import { firstProducts } from '#lib/products/product-records';
import { countTasksOfStatus, firstTasksOfStatus } from '#lib/tasks/task-queries';

/**
 * GET /system/health: the organization's compliance score (lib/compliance/health-checks.ts says how it is
 * made). The reads are bounded whatever the organization's size: each is one Query (paged up to its cap),
 * all side by side, and then one Query per running execution examined:
 *
 * | read | DynamoDB call | at most |
 * |---|---|---|
 * | agents | Query `T#<org>`, `AGENT#…` | MAX_AGENTS |
 * | tasks in progress, blocked | Query gsi1 `T#<org>#TASKS#<status>`, one per status | MAX_TASKS each |
 * | tasks in review | the same Query with `Select: COUNT` | MAX_TASKS counted |
 * | products | Query `T#<org>`, `PRODUCT#…` | MAX_PRODUCTS |
 * | running executions | Query gsi1 `PIPEEXEC#RUNNING`, filtered to the organization | MAX_EXECUTIONS kept |
 * | (the same) | the running index is shared by every organization: entries read | MAX_RUNNING_READ |
 * | their stages | Query `T#<org>`, `PIPESTAGE#<execution>#…`, one per execution | 200 stages each |
 *
 * `complete` is false when any read stopped at its cap: the score then covers what was read.
 */
export const MAX_AGENTS = 500;
export const MAX_TASKS = 500;
export const MAX_PRODUCTS = 500;
export const MAX_EXECUTIONS = 10;
export const MAX_RUNNING_READ = 1_000;

export type HealthStatus = 'healthy' | 'degraded' | 'unhealthy';

/** The score's verdict: 90 and above is healthy, 70 and above degraded, below that unhealthy. */
export const statusOf = (score: number): HealthStatus =>
  score >= 90 ? 'healthy' : score >= 70 ? 'degraded' : 'unhealthy';

export interface SystemHealth {
  score: number;
  status: HealthStatus;
  /** Ids of the checks that failed, in catalogue order. */
  failed_checks: string[];
  complete: boolean;
  checked_at: string;
  sections: Record<SectionName, SectionResult>;
}

export async function systemHealth(ctx: RequestContext): Promise<SystemHealth> {
  const { orgId } = requirePrincipal(ctx);
  const now = ctx.ports.clock.now();
  const [agents, inProgress, blocked, inReview, products, running] = await Promise.all([
    firstAgentItems(orgId, MAX_AGENTS),
    firstTasksOfStatus(orgId, 'in_progress', MAX_TASKS),
    firstTasksOfStatus(orgId, 'blocked', MAX_TASKS),
    countTasksOfStatus(orgId, 'review', MAX_TASKS),
    firstProducts(orgId, MAX_PRODUCTS),
    runningExecutionsOf(orgId, { max: MAX_EXECUTIONS, maxRead: MAX_RUNNING_READ }),
  ]);
  const executions = await Promise.all(
    running.items.map(async (execution) => ({ execution, stages: await stageItems(orgId, execution.id) })),
  );
  const snapshot: HealthSnapshot = {
    now,
    agents: agents.items,
    inProgress: inProgress.items,
    blocked: blocked.items,
    inReview: inReview.count,
    products: products.items,
    executions,
  };
  const { score, sections } = evaluateHealth(snapshot);
  return {
    score,
    status: statusOf(score),
    failed_checks: Object.values(sections).flatMap((section) =>
      section.checks.filter((check) => check.status === 'failed').map((check) => check.id),
    ),
    complete: [agents, inProgress, blocked, inReview, products, running].every((read) => read.complete),
    checked_at: now.toISOString(),
    sections,
  };
}
