import { idleCheck } from '#lib/agents/idle-check';
import { ValidationError } from '#lib/errors';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import * as routes from '#lib/routes/agent-runs';

/** The agent-runs function: the idle check, without a credential. */
export function agentRunsHandler(options: GroupOptions = {}) {
  return groupHandler(
    'agent-runs',
    [
      route(routes.idleCheck, async ({ query, headers, ctx }) => {
        const orgId = query.organization_id ?? headers['x-organization-id'];
        if (!orgId) {
          const message = 'organization_id (or the X-Organization-Id header) names the agent’s organization';
          throw new ValidationError(message, [{ path: 'organization_id', message }]);
        }
        return idleCheck(orgId, query.agent_name, query.run_mode ?? 'task', ctx.ports.clock.now());
      }),
    ],
    options,
  );
}

export const handler = agentRunsHandler();
