import { type ActivityEntry, activityWrites } from '#lib/activity/activity-log';
import type { TransactItem } from '#lib/db/transactions';
import { instanceTotalsWrite, orgDayWrite, orgTotalsWrite } from '#lib/metrics/metric-records';
import type { ExecutionItem } from '#lib/pipelines/execution-keys';

/**
 * What an execution's start and end write beside it, in the same transaction: its activity entry and
 * the counters the dashboards read (executions by status, the day's starts, the instance's total).
 * An execution is `running` from its start (lib/pipelines/executions.ts) until it succeeds or fails
 * (lib/pipelines/stage-finish.ts) or is cancelled. An execution started before the counters existed
 * (not `counted`) is not taken off `executions_running` when it ends.
 */

type Actor = Pick<ActivityEntry, 'actor_type' | 'actor_id'>;
export type ExecutionEnd = 'succeeded' | 'failed' | 'cancelled';

const ENDED_ACTION: Record<ExecutionEnd, string> = {
  succeeded: 'pipeline.execution_completed',
  failed: 'pipeline.execution_failed',
  cancelled: 'pipeline.execution_cancelled',
};

const entryOf = (execution: ExecutionItem, actor: Actor, action: string, metadata: Record<string, unknown>) => ({
  ...actor,
  action,
  entity_type: 'pipeline_execution',
  entity_id: String(execution.id),
  metadata: { pipeline_id: execution.pipeline_id, pipeline_name: execution.pipeline_name, ...metadata },
});

/** The writes of a new execution (written `counted`), for the transaction of its execution item. */
export function executionStartWrites(orgId: string, execution: ExecutionItem, actor: Actor, now: Date): TransactItem[] {
  return [
    ...activityWrites(
      orgId,
      entryOf(execution, actor, 'pipeline.execution_started', { stages_total: execution.stages_total }),
      now,
    ),
    orgTotalsWrite(orgId, { executions_running: 1 }),
    orgDayWrite(orgId, now, { executions_started: 1 }),
    instanceTotalsWrite({ executions: 1 }),
  ];
}

/**
 * The writes of an execution ending `to`, for the transaction of its status change. `actor` is who
 * ended it: the caller of cancel, else the pipeline itself.
 */
export function executionEndWrites(
  orgId: string,
  execution: ExecutionItem,
  to: ExecutionEnd,
  now: Date,
  actor: Actor = { actor_type: 'system', actor_id: `pipeline:${execution.pipeline_id}` },
): TransactItem[] {
  const metadata = { stages_succeeded: execution.stages_succeeded, tokens_used: execution.tokens_used };
  return [
    ...activityWrites(orgId, entryOf(execution, actor, ENDED_ACTION[to], metadata), now),
    orgTotalsWrite(orgId, { [`executions_${to}`]: 1, ...(execution.counted ? { executions_running: -1 } : {}) }),
  ];
}
