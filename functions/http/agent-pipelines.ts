import { queue } from '#lib/app/queue';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { rerunExecution } from '#lib/pipelines/execution-rerun';
import { cancelExecution, executePipeline, getExecution, listExecutions } from '#lib/pipelines/executions';
import { getPipeline, listPipelines, listPipelineTemplates } from '#lib/pipelines/pipeline-queries';
import { clonePipelineTemplate, createPipeline, deletePipeline, updatePipeline } from '#lib/pipelines/pipeline-writes';
import * as routes from '#lib/routes/agent-pipelines';

/**
 * The agent-pipelines function; it queues the first stages of an execution or a rerun. Tests pass options (a
 * fixed clock, their queue).
 */
export function agentPipelinesHandler(options: GroupOptions = {}) {
  return groupHandler(
    'agent-pipelines',
    [
      route(routes.listPipelines, async ({ query, ctx }) => await listPipelines(ctx, query)),
      route(routes.createPipeline, async ({ body, ctx }) => await createPipeline(ctx, body)),
      route(routes.listPipelineTemplates, async ({ query, ctx }) => listPipelineTemplates(ctx, query)),
      route(
        routes.clonePipelineTemplate,
        async ({ params, body, ctx }) => await clonePipelineTemplate(ctx, params.id, body.name),
      ),
      route(routes.getPipeline, async ({ params, ctx }) => await getPipeline(ctx, params.id)),
      route(routes.updatePipeline, async ({ params, body, ctx }) => await updatePipeline(ctx, params.id, body)),
      route(routes.deletePipeline, async ({ params, ctx }) => await deletePipeline(ctx, params.id)),
      route(
        routes.executePipeline,
        async ({ params, body, ctx }) => await executePipeline(ctx, params.id, body.inputs ?? {}),
      ),
      route(routes.listExecutions, async ({ params, query, ctx }) => await listExecutions(ctx, params.id, query)),
      route(routes.getExecution, async ({ params, ctx }) => await getExecution(ctx, params.id, params.executionId)),
      route(
        routes.cancelExecution,
        async ({ params, ctx }) => await cancelExecution(ctx, params.id, params.executionId),
      ),
      route(routes.rerunExecution, async ({ params, ctx }) => await rerunExecution(ctx, params.id, params.executionId)),
    ],
    { ...options, ports: { queue, ...options.ports } },
  );
}

export const handler = agentPipelinesHandler();
