import { localScheduler } from '#lib/adapters/local/table-scheduler';
import { deferred } from '#lib/app/deferred';
import { config } from '#lib/config';
import type { Scheduler } from '#lib/kernel/ports';

let eventBridge: Scheduler | undefined;

/**
 * Schedules: EventBridge Scheduler in aws mode (SCHEDULE_GROUP, AGENT_TICK_ARN, DISCOVERY_RUN_ARN,
 * SCHEDULER_ROLE_ARN), its client loaded at the first schedule written;
 * locally the process's table-backed scheduler, whose timers the local runtime drives
 * (infra/local/scheduler.ts). Either is built once per process.
 */
export function scheduler(): Scheduler {
  if (config.mode !== 'aws') return localScheduler();
  eventBridge ??= deferred(
    async () => {
      const { eventBridgeScheduler, schedulerClient } = await import('#lib/adapters/aws/eventbridge-scheduler');
      return eventBridgeScheduler(schedulerClient(config.region), {
        group: config.scheduleGroup,
        roleArn: config.schedulerRoleArn,
        targets: { 'agent-tick': config.agentTickArn, 'discovery-run': config.discoveryRunArn },
      });
    },
    ['put', 'setEnabled', 'remove'],
    { kind: 'eventbridge' },
  );
  return eventBridge;
}
