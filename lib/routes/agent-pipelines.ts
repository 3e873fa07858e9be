import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { freeFormObject, pagingQuery } from '#lib/http/schemas';
import {
  MAX_STAGES,
  PIPELINE_DESCRIPTION_MAX,
  PIPELINE_NAME_MAX,
  STAGE_TIMEOUT_DEFAULT,
  STAGE_TIMEOUT_MAX,
} from '#lib/pipelines/pipeline-keys';
import { MAX_STAGES_BYTES } from '#lib/pipelines/pipeline-validation';
import { BUILT_IN_VARIABLES } from '#lib/pipelines/pipeline-variables';
import { integerId } from '#lib/routes/schemas';

/**
 * Agent pipelines: definitions of multi-stage workflows of agents, and the built-in pipeline templates
 * they can be cloned from; served by the `agent-pipelines` function.
 */

const group = 'agent-pipelines';
const tags = ['Agent pipelines'];

const RULES = [
  'Stages are validated as a whole; every problem is reported at once in `details`, each with the path of the ' +
    'value at fault (`body.stages[2].depends_on[0]`):',
  `- at least 1 and at most ${MAX_STAGES} stages, at most ${MAX_STAGES_BYTES} bytes as JSON;`,
  '- stage names match `^[a-z][a-z0-9_-]{0,63}$`, are unique in the pipeline (a duplicate names both indexes), ' +
    'and `input` is reserved;',
  '- each `depends_on` entry names another stage of the pipeline (no unknown stage, no self-dependency, none ' +
    'twice), and depends_on has no cycle (reported with its stages in order, e.g. `a → b → c → a`);',
  '- `agent` names an agent of the organization or a template slug: a built-in template, or one of the ' +
    'organization’s own templates that is not archived (an agent of that name wins over a template);',
  `- \`config.max_tokens\`, if given, is a positive integer (the stage's token cap); \`config.timeout_sec\`, if ` +
    `given, an integer from 1 to ${STAGE_TIMEOUT_MAX} (default ${STAGE_TIMEOUT_DEFAULT});`,
  '- every variable reference in the string values of `config` (at any depth) follows the grammar below.',
].join('\n');

const GRAMMAR = [
  'Variable references: every `{{` begins a reference closed by the next `}}` (spaces inside allowed). A ' +
    '`<field>` is letters, digits and `_`, not starting with a digit, and may go deeper with dots.',
  '- `{{input.<field>}}`: input `<field>` of the execution;',
  '- `{{<stage>.<field>}}`: output `<field>` of `<stage>`, which must be an ancestor of the referencing stage ' +
    '(reachable through depends_on, directly or transitively);',
  `- built-ins: ${BUILT_IN_VARIABLES.map((name) => `\`{{${name}}}\``).join(', ')}.`,
  'Anything else (`{{foo}}`, `{{ }}`, a `{{` never closed) is a 400.',
].join('\n');

const stageName = z.string().max(100).meta({ description: 'Unique in the pipeline; `^[a-z][a-z0-9_-]{0,63}$`' });

const Stage = z
  .object({
    name: stageName,
    agent: z.string().max(100).meta({ description: 'An agent name of the organization, or a template slug' }),
    order: z
      .number()
      .int()
      .min(0)
      .max(1_000_000)
      .optional()
      .meta({ description: 'Breaks ties among stages ready at once; default: the position, from 1' }),
    depends_on: z
      .array(stageName)
      .max(MAX_STAGES)
      .optional()
      .meta({ description: 'Stages that must complete first; default none' }),
    config: freeFormObject({ maxDepth: 8, maxBytes: 16_384 })
      .optional()
      .meta({ description: 'Passed to the agent; string values may hold variable references; default {}' }),
  })
  .meta({ id: 'PipelineStageInput' });

const stages = z
  .array(Stage)
  .max(MAX_STAGES)
  .meta({ description: `1 to ${MAX_STAGES} stages` });
const pipelineName = z.string().trim().min(1).max(PIPELINE_NAME_MAX);
const description = z.string().max(PIPELINE_DESCRIPTION_MAX);

const StageRecord = z
  .object({
    name: z.string(),
    agent: z.string(),
    order: z.number().int(),
    depends_on: z.array(z.string()),
    config: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'PipelineStage' });

export const PipelineRecord = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    stages: z.array(StageRecord),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'AgentPipeline' });

export const PipelineTemplateRecord = z
  .object({
    id: z.string().meta({ description: 'A stable kebab-case id, e.g. `feature-delivery`' }),
    name: z.string(),
    description: z.string(),
    inputs: z
      .array(z.object({ name: z.string(), description: z.string(), required: z.boolean() }))
      .meta({ description: 'The `{{input.<field>}}` its stages reference, which an execution must be given' }),
    stages: z.array(StageRecord),
  })
  .meta({ id: 'AgentPipelineTemplate' });

const params = z.object({ id: integerId('id') });

export const listPipelines = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/agent-pipelines',
  auth: 'bearer',
  summary: 'List pipelines',
  description: 'The organization’s pipelines, oldest first, paged.',
  query: pagingQuery,
  envelope: 'list',
  response: PipelineRecord,
});

export const createPipeline = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/agent-pipelines',
  auth: 'bearer',
  summary: 'Create a pipeline',
  description:
    '`name` (at most 200 characters, unique in the organization regardless of case: 409 otherwise; two ' +
    'concurrent creates of one name make one pipeline) and `stages` are required; `description` defaults to ' +
    `empty. The creation is recorded in the activity log (\`pipeline.created\`).\n\n${RULES}\n\n${GRAMMAR}`,
  body: z.object({ name: pipelineName, description: description.optional(), stages }),
  response: PipelineRecord,
  status: 201,
  errors: [409],
});

export const listPipelineTemplates = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/agent-pipelines/templates',
  auth: 'bearer',
  summary: 'List the built-in pipeline templates',
  description:
    'Pipelines ready to clone, the same in every organization: `feature-delivery`, `data-collection` and ' +
    '`incident-response`. Their stages run built-in agent templates, so a clone validates anywhere; `inputs` ' +
    'lists what an execution of the clone must be given.',
  query: pagingQuery,
  envelope: 'list',
  response: PipelineTemplateRecord,
});

export const clonePipelineTemplate = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/agent-pipelines/templates/{id}/clone',
  auth: 'bearer',
  summary: 'Copy a pipeline template into the organization',
  description:
    'Creates a pipeline named `name` with the template’s description and stages (validated as on create). ' +
    'An unknown template is 404; a name the organization has is 409. Recorded as `pipeline.created`.',
  params: z.object({
    id: z
      .string()
      .max(64)
      .regex(/^[a-z][a-z0-9-]*$/, 'a template id: lowercase letters, digits and hyphens')
      .meta({ description: 'Template id, e.g. `feature-delivery`' }),
  }),
  body: z.object({ name: pipelineName }),
  response: PipelineRecord,
  status: 201,
  errors: [404, 409],
});

export const getPipeline = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/agent-pipelines/{id}',
  auth: 'bearer',
  summary: 'One pipeline',
  description: 'A pipeline of another organization answers 404.',
  params,
  response: PipelineRecord,
  errors: [404],
});

export const updatePipeline = defineRoute({
  group,
  tags,
  method: 'PATCH',
  path: '/agent-pipelines/{id}',
  auth: 'bearer',
  summary: 'Update a pipeline',
  description:
    'At least one of `name`, `description`, `stages`. `stages` replaces the stages as a whole and is validated ' +
    'as on create; a new name must be free (409). Only values that differ are written; a PATCH that changes ' +
    'nothing writes nothing. Recorded as `pipeline.updated`.\n\n' +
    `${RULES}\n\n${GRAMMAR}`,
  params,
  body: z
    .object({ name: pipelineName.optional(), description: description.optional(), stages: stages.optional() })
    .refine((body) => Object.values(body).some((value) => value !== undefined), 'name at least one field to change'),
  response: PipelineRecord,
  errors: [404, 409],
});

export const deletePipeline = defineRoute({
  group,
  tags,
  method: 'DELETE',
  path: '/agent-pipelines/{id}',
  auth: 'bearer',
  summary: 'Delete a pipeline',
  description:
    'Deletes the pipeline and frees its name at once; answers the deleted pipeline with `meta.deleted: true`. ' +
    'Once pipelines can be executed, a delete cancels the pipeline’s running executions first. Recorded as ' +
    '`pipeline.deleted`.',
  params,
  envelope: 'deleted',
  response: PipelineRecord,
  errors: [404],
});
