import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { type PortSpec, wirePorts } from '#lib/app/ports';
import { type FactoryOptions, startFactory } from '#lib/factory/factory-pool';
import { requestContext } from '#lib/kernel/context';

/**
 * Every minute (EventBridge, one at a time: reserved concurrency 1): the factory workers of every
 * organization (lib/factory/factory-pool.ts) run in this invocation for RUN_MS, then stop claiming and
 * finish the jobs in hand before the function's time is up. A job still running when the invocation
 * ends keeps its lease until it runs out, and the next claim takes it up again. Under `npm start` the
 * local runtime runs the factory continuously instead (infra/local/start.ts).
 */
export const RUN_MS = 55_000;
/** Left for the jobs in hand after RUN_MS, below the function's timeout. */
const DRAIN_MARGIN_MS = 10_000;

export function factoryPoolHandler(options: { ports?: PortSpec; runMs?: number } & FactoryOptions = {}) {
  const { ports: spec, runMs = RUN_MS, ...factory } = options;
  const ports = wirePorts({ ...spec });
  return async (event?: ScheduledEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
    const ctx = requestContext({ ports, traceId: event?.id ?? randomUUID() });
    const runtime = startFactory(ctx, factory);
    const left = (context?.getRemainingTimeInMillis() ?? runMs + DRAIN_MARGIN_MS) - DRAIN_MARGIN_MS;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(runMs, left))));
    await runtime.stop();
    return { runtime_id: runtime.runtimeId, ...runtime.counts() };
  };
}

export const handler = factoryPoolHandler();
