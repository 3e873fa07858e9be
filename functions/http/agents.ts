import { controlAgent, retireAgent, updateAgent } from '#lib/agents/agent-control';
import { createAgent } from '#lib/agents/agent-create';
import { findAgents, getAgent, listAgents } from '#lib/agents/agent-queries';
import { fromPublicStatus } from '#lib/agents/agent-status';
import { toAgentView, toPublicAgent } from '#lib/agents/agent-view';
import { scheduler } from '#lib/app/scheduler';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { withMeta } from '#lib/http/results';
import * as routes from '#lib/routes/agents';

/** The agents function; tests pass options (their own scheduler, a fixed clock). */
export function agentsHandler(options: GroupOptions = {}) {
  return groupHandler(
    'agents',
    [
      route(routes.listAgents, async ({ query, ctx }) => {
        const { limit, offset, status } = query;
        return listAgents(ctx, { statuses: status }, { limit, offset });
      }),
      route(routes.createAgent, async ({ body, ctx }) => {
        const { tools, capabilities, config, ...rest } = body;
        const created = await createAgent(ctx, {
          ...rest,
          tools: tools ?? [],
          capabilities: capabilities ?? [],
          config: config ?? {},
        });
        return { agent: toAgentView(created.item, created.automations, ctx.ports.clock.now()), steps: created.steps };
      }),
      ...(['stop', 'start', 'restart'] as const).map((action) =>
        route(
          { stop: routes.stopAgent, start: routes.startAgent, restart: routes.restartAgent }[action],
          async ({ params, body, ctx }) => {
            const note = body?.note ?? null;
            const changed = await controlAgent(ctx, params.name, action, note);
            return withMeta(toAgentView(changed.item, changed.automations, ctx.ports.clock.now()), { action, note });
          },
        ),
      ),

      route(routes.listPublicAgents, async ({ query, ctx }) => {
        const { limit, offset, status, role } = query;
        const page = await findAgents(ctx, { statuses: status?.map(fromPublicStatus), role }, { limit, offset });
        return { ...page, items: page.items.map(toPublicAgent) };
      }),
      route(routes.createPublicAgent, async ({ body, ctx }) => {
        const { status, ...rest } = body;
        const created = await createAgent(ctx, { ...rest, ...(status ? { status: fromPublicStatus(status) } : {}) });
        return toPublicAgent(created.item);
      }),
      route(routes.getPublicAgent, async ({ params, ctx }) => toPublicAgent(await getAgent(ctx, params.id))),
      route(routes.updatePublicAgent, async ({ params, body, ctx }) => {
        const { status, ...rest } = body;
        const changed = await updateAgent(ctx, params.id, {
          ...rest,
          ...(status ? { status: fromPublicStatus(status) } : {}),
        });
        return toPublicAgent(changed.item);
      }),
      route(routes.deletePublicAgent, async ({ params, ctx }) => {
        const changed = await retireAgent(ctx, params.id);
        return withMeta(toPublicAgent(changed.item), { deleted: false, status: 'offline' });
      }),
    ],
    { ...options, ports: { scheduler, ...options.ports } },
  );
}

export const handler = agentsHandler();
