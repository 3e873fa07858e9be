import type { ScheduleTarget } from '#lib/kernel/ports';

/**
 * The function of serverless.yml each schedule target starts. Deployed, a schedule names that
 * function's ARN (AGENT_TICK_ARN for `agent-tick`, DISCOVERY_RUN_ARN for `discovery-run`); under
 * `npm start`, the local runtime imports the function's handler from serverless.yml by this name and
 * calls it with the schedule's payload.
 */
export const SCHEDULE_TARGET_FUNCTIONS: Record<ScheduleTarget, string> = {
  'agent-tick': 'agentTick',
  'discovery-run': 'discoveryRun',
};
