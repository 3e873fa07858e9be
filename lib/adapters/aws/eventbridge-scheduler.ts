import {
  CreateScheduleCommand,
  type CreateScheduleInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  type GetScheduleOutput,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import type { Scheduler, ScheduleSpec, ScheduleState, ScheduleTarget } from '#lib/kernel/ports';

/**
 * The AWS scheduler adapter: one EventBridge Scheduler schedule per spec name, in one schedule group,
 * each invoking its target's Lambda function directly with the spec's payload as the event.
 *
 * EventBridge rates are whole minutes, at least one: an interval is rounded up to the next minute and
 * the answer says so (`note`), so that what the caller shows is what runs.
 */
export interface EventBridgeSchedulerOptions {
  /** The schedule group every schedule lives in (SCHEDULE_GROUP). */
  group: string;
  /** The role EventBridge assumes to invoke a target (SCHEDULER_ROLE_ARN). */
  roleArn: string | undefined;
  /** The ARN of each target's function; a target without one fails at its first put, naming its variable. */
  targets: Partial<Record<ScheduleTarget, string>>;
}

/** The variable that configures each target's function ARN, named when it is missing. */
const TARGET_VARIABLES: Record<ScheduleTarget, string> = {
  'agent-tick': 'AGENT_TICK_ARN',
  'discovery-run': 'DISCOVERY_RUN_ARN',
};

/**
 * What EventBridge runs for an interval: whole minutes, rounded up, at least one.
 *
 * @example eventBridgeRate(90) // { expression: 'rate(2 minutes)', intervalSec: 120, note: '… runs every 2 minutes' }
 */
export function eventBridgeRate(intervalSec: number): Omit<ScheduleState, 'enabled'> {
  if (!Number.isFinite(intervalSec) || intervalSec <= 0) {
    throw new Error(`A schedule's interval must be a positive number of seconds, not ${intervalSec}`);
  }
  const minutes = Math.max(1, Math.ceil(intervalSec / 60));
  const every = minutes === 1 ? '1 minute' : `${minutes} minutes`;
  const state = { expression: `rate(${every})`, intervalSec: minutes * 60 };
  if (minutes * 60 === intervalSec) return state;
  const why = intervalSec < 60 ? 'run at most once a minute' : 'run in whole minutes';
  return { ...state, note: `EventBridge schedules ${why}: interval_sec ${intervalSec} runs every ${every}` };
}

const errorName = (error: unknown): string | undefined => (error as { name?: string } | undefined)?.name;

export function eventBridgeScheduler(client: SchedulerClient, options: EventBridgeSchedulerOptions): Scheduler {
  const GroupName = options.group;

  const definition = (spec: ScheduleSpec, expression: string): CreateScheduleInput => {
    const arn = options.targets[spec.target];
    if (!arn) {
      throw new Error(
        `No function ARN is configured for schedule target ${spec.target} (${TARGET_VARIABLES[spec.target]})`,
      );
    }
    if (!options.roleArn) throw new Error('No role is configured for EventBridge schedules (SCHEDULER_ROLE_ARN)');
    return {
      Name: spec.name,
      GroupName,
      ScheduleExpression: expression,
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: spec.enabled ? 'ENABLED' : 'DISABLED',
      Target: {
        Arn: arn,
        RoleArn: options.roleArn,
        Input: JSON.stringify(spec.payload),
        // A tick that could not be delivered is not worth delivering late: the next one is due within an
        // interval and does the same work, while a retried one could land on top of it.
        RetryPolicy: { MaximumRetryAttempts: 0 },
      },
      ActionAfterCompletion: 'NONE',
    };
  };

  return {
    kind: 'eventbridge',

    async put(spec) {
      const state = eventBridgeRate(spec.intervalSec);
      const input = definition(spec, state.expression);
      // Most puts replace an existing schedule, so Update goes first; Create on a schedule another
      // writer created meanwhile meets ConflictException, and that writer's schedule is then replaced.
      try {
        await client.send(new UpdateScheduleCommand(input));
      } catch (error) {
        if (errorName(error) !== 'ResourceNotFoundException') throw error;
        try {
          await client.send(new CreateScheduleCommand(input));
        } catch (createError) {
          if (errorName(createError) !== 'ConflictException') throw createError;
          await client.send(new UpdateScheduleCommand(input));
        }
      }
      return { ...state, enabled: spec.enabled };
    },

    async setEnabled(name, enabled) {
      let current: GetScheduleOutput;
      try {
        current = await client.send(new GetScheduleCommand({ Name: name, GroupName }));
      } catch (error) {
        if (errorName(error) === 'ResourceNotFoundException') return;
        throw error;
      }
      const State = enabled ? 'ENABLED' : 'DISABLED';
      if (current.State === State) return;
      // UpdateSchedule replaces the whole definition: everything but the state is sent back as read.
      try {
        await client.send(
          new UpdateScheduleCommand({
            Name: name,
            GroupName,
            ScheduleExpression: current.ScheduleExpression,
            ScheduleExpressionTimezone: current.ScheduleExpressionTimezone,
            StartDate: current.StartDate,
            EndDate: current.EndDate,
            Description: current.Description,
            KmsKeyArn: current.KmsKeyArn,
            FlexibleTimeWindow: current.FlexibleTimeWindow,
            Target: current.Target,
            ActionAfterCompletion: current.ActionAfterCompletion,
            State,
          }),
        );
      } catch (error) {
        // Removed between the read and the write: there is nothing left to enable or disable.
        if (errorName(error) !== 'ResourceNotFoundException') throw error;
      }
    },

    async remove(name) {
      try {
        await client.send(new DeleteScheduleCommand({ Name: name, GroupName }));
      } catch (error) {
        if (errorName(error) !== 'ResourceNotFoundException') throw error;
      }
    },
  };
}

export const schedulerClient = (region: string) => new SchedulerClient({ region });
