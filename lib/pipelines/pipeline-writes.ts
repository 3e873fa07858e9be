import { activityActor, activityWrites } from '#lib/activity/activity-log';
import { pad } from '#lib/db/keys';
import { transact } from '#lib/db/transactions';
import { ConflictError, isConditionFailed } from '#lib/errors';
import { requirePrincipal } from '#lib/identity/access';
import type { Principal, RequestContext } from '#lib/kernel/context';
import { orgTotalsWrite } from '#lib/metrics/metric-records';
import { cancelActiveExecutions } from '#lib/pipelines/executions';
import { type Pipeline, type PipelineItem, pipelineKeys, toPipeline } from '#lib/pipelines/pipeline-keys';
import { pipelineNotFound, pipelineTemplateNotFound } from '#lib/pipelines/pipeline-queries';
import {
  getPipelineItem,
  newPipelineWrites,
  nextPipelineId,
  pipelineDeleteWrites,
  pipelineReplaceWrites,
} from '#lib/pipelines/pipeline-records';
import { pipelineTemplateById } from '#lib/pipelines/pipeline-templates';
import { normalizeStages, type StageInput, validateStages } from '#lib/pipelines/pipeline-validation';
import { pipelineSearchFields, wordsOf } from '#lib/search/search-fields';
import { postingWrites } from '#lib/search/search-postings';

/**
 * Creating, changing, cloning and deleting pipelines. Each write lands in one transaction with its name
 * guard, its search postings and its activity entry; changes and deletes hold only on the version read,
 * and are read again and retried when another write landed in between.
 */

/** The posting writes of a pipeline going from `before` to `after` (either absent: created, deleted). */
const pipelinePostings = (orgId: string, id: number, before?: PipelineItem, after?: PipelineItem) =>
  postingWrites({
    orgId,
    kind: 'pipeline',
    ref: pad(id),
    before: before ? wordsOf(pipelineSearchFields(before)) : undefined,
    after: after ? wordsOf(pipelineSearchFields(after)) : undefined,
  });

export interface NewPipeline {
  name: string;
  description?: string | undefined;
  stages: StageInput[];
}

export type PipelineChanges = Partial<NewPipeline>;

export const pipelineNameTaken = () =>
  new ConflictError('A pipeline with this name exists', [{ path: 'name', message: 'is taken' }]);

const WRITE_ATTEMPTS = 3;
const changedMeanwhile = () =>
  new ConflictError('The pipeline was changed by another request at the same time; try again');

const activity = (principal: Principal, action: string, id: number, metadata: Record<string, unknown>) => ({
  ...activityActor(principal),
  action,
  entity_type: 'pipeline',
  entity_id: String(id),
  metadata,
});

/** POST /agent-pipelines: validated, then written with its name guard (409 when the name is taken). */
export async function createPipeline(ctx: RequestContext, input: NewPipeline): Promise<Pipeline> {
  return await insertPipeline(ctx, input, {});
}

/** POST /agent-pipelines/templates/{id}/clone: the template's stages, as a new pipeline named `name`. */
export async function clonePipelineTemplate(ctx: RequestContext, templateId: string, name: string): Promise<Pipeline> {
  requirePrincipal(ctx);
  const template = pipelineTemplateById(templateId);
  if (!template) throw pipelineTemplateNotFound();
  return await insertPipeline(
    ctx,
    { name, description: template.description, stages: template.stages },
    { template: template.id },
  );
}

async function insertPipeline(
  ctx: RequestContext,
  input: NewPipeline,
  metadata: Record<string, unknown>,
): Promise<Pipeline> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const stages = normalizeStages(input.stages);
  await validateStages(orgId, stages);

  const id = await nextPipelineId(orgId);
  const now = ctx.ports.clock.now();
  const at = now.toISOString();
  const actor = activityActor(principal);
  const item: PipelineItem = {
    ...pipelineKeys.byId(orgId, id),
    id,
    name: input.name,
    description: input.description ?? '',
    stages,
    version: 1,
    created_at: at,
    updated_at: at,
    created_by: actor.actor_id,
    counted: true,
  };
  await transact(
    [
      ...newPipelineWrites(orgId, item),
      orgTotalsWrite(orgId, { pipelines: 1 }),
      ...activityWrites(orgId, activity(principal, 'pipeline.created', id, { name: item.name, ...metadata }), now),
      ...pipelinePostings(orgId, id, undefined, item),
    ],
    { 'name-taken': pipelineNameTaken },
  );
  return toPipeline(item);
}

/**
 * PATCH /agent-pipelines/{id}. Stages given replace the stages as a whole and are validated as on
 * create. Only values that differ are written; a PATCH that changes nothing writes nothing.
 */
export async function updatePipeline(ctx: RequestContext, id: number, changes: PipelineChanges): Promise<Pipeline> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  const stages = changes.stages ? normalizeStages(changes.stages) : undefined;
  if (stages) await validateStages(orgId, stages);

  for (let attempt = 1; ; attempt += 1) {
    const read = await getPipelineItem({ orgId, id });
    if (!read) throw pipelineNotFound();
    const wanted = {
      name: changes.name ?? read.name,
      description: changes.description ?? read.description,
      stages: stages ?? read.stages,
    };
    const changed = (['name', 'description', 'stages'] as const).filter(
      (field) => JSON.stringify(wanted[field]) !== JSON.stringify(read[field]),
    );
    if (changed.length === 0) return toPipeline(read);

    const now = ctx.ports.clock.now();
    const next: PipelineItem = { ...read, ...wanted, version: read.version + 1, updated_at: now.toISOString() };
    try {
      await transact(
        [
          ...pipelineReplaceWrites(orgId, read, next),
          ...activityWrites(orgId, activity(principal, 'pipeline.updated', id, { changed }), now),
          ...pipelinePostings(orgId, id, read, next),
        ],
        { 'name-taken': pipelineNameTaken },
      );
      return toPipeline(next);
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
      if (attempt >= WRITE_ATTEMPTS) throw changedMeanwhile();
    }
  }
}

/**
 * DELETE /agent-pipelines/{id}: its queued and running executions are cancelled first (their stage
 * messages then find them cancelled and stop); the pipeline and its name guard go in one transaction,
 * so the name is free again at once.
 */
export async function deletePipeline(ctx: RequestContext, id: number): Promise<Pipeline> {
  const principal = requirePrincipal(ctx);
  const orgId = principal.orgId;
  if (!(await getPipelineItem({ orgId, id }))) throw pipelineNotFound();
  await cancelActiveExecutions(ctx, orgId, id);
  for (let attempt = 1; ; attempt += 1) {
    const read = await getPipelineItem({ orgId, id });
    if (!read) throw pipelineNotFound();
    const now = ctx.ports.clock.now();
    try {
      await transact([
        ...pipelineDeleteWrites(orgId, read),
        ...(read.counted ? [orgTotalsWrite(orgId, { pipelines: -1 })] : []),
        ...activityWrites(orgId, activity(principal, 'pipeline.deleted', id, { name: read.name }), now),
        ...pipelinePostings(orgId, id, read),
      ]);
      return toPipeline(read);
    } catch (error) {
      if (!isConditionFailed(error, 'stale')) throw error;
      if (attempt >= WRITE_ATTEMPTS) throw changedMeanwhile();
    }
  }
}
