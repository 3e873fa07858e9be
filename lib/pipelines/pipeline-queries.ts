import type { Page, PageRequest } from '#lib/db/paging';
import { NotFoundError } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { type Pipeline, toPipeline } from '#lib/pipelines/pipeline-keys';
import { getPipelineItem, pipelinePage } from '#lib/pipelines/pipeline-records';
import { type PipelineTemplate, pipelineTemplates } from '#lib/pipelines/pipeline-templates';

/** Reading pipelines and the built-in pipeline templates. */

export const pipelineNotFound = () => new NotFoundError('Pipeline not found');
export const pipelineTemplateNotFound = () => new NotFoundError('Pipeline template not found');

/** GET /agent-pipelines: the organization's pipelines, oldest first. */
export async function listPipelines(ctx: RequestContext, page: PageRequest): Promise<Page<Pipeline>> {
  const principal = requirePrincipal(ctx);
  const found = await pipelinePage(principal.orgId, page);
  return { items: found.items.map(toPipeline), total: found.total };
}

/** GET /agent-pipelines/{id}: a pipeline of another organization is as unknown as a missing one (404). */
export async function getPipeline(ctx: RequestContext, id: number): Promise<Pipeline> {
  const principal = requirePrincipal(ctx);
  const item = await getPipelineItem({ orgId: principal.orgId, id });
  if (!item) throw pipelineNotFound();
  return toPipeline(item);
}

/** GET /agent-pipelines/templates. */
export function listPipelineTemplates(ctx: RequestContext, page: PageRequest): Page<PipelineTemplate> {
  requirePrincipal(ctx);
  const all = pipelineTemplates();
  return { items: all.slice(page.offset, page.offset + page.limit), total: all.length };
}
