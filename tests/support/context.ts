import { type PortSpec, wirePorts } from '#lib/app/ports';
import { type Principal, type RequestContext, requestContext } from '#lib/kernel/context';

/**
 * A request context for calling a domain function directly, with the ports a test hands in (the clock
 * and the configured secrets are always there), as an entry point would build it.
 *
 * @example await publishEvent(contextWith({ queue }), orgId, 'task_completed', { task });
 */
export const contextWith = (ports: PortSpec, principal?: Principal): RequestContext =>
  requestContext({ ports: wirePorts(ports), traceId: 'test', ...(principal ? { principal } : {}) });
