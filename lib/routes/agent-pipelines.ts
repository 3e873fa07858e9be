import * as z from 'zod';
import { defineRoute } from '#lib/http/route';
import { freeFormObject, pagingQuery } from '#lib/http/schemas';
import { DEFAULT_STAGE_TOKEN_ESTIMATE, EXECUTION_STATUSES, STAGE_STATUSES } from '#lib/pipelines/execution-keys';
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
    'Cancels the pipeline’s queued and running executions first (as the cancel route does), then deletes the ' +
    'pipeline and frees its name at once; answers the deleted pipeline with `meta.deleted: true`. Its ' +
    'executions stay readable by id (`GET …/executions/{executionId}`). Recorded as `pipeline.deleted`.',
  params,
  envelope: 'deleted',
  response: PipelineRecord,
  errors: [404],
});

const ExecutionStageRecord = z
  .object({
    name: z.string(),
    agent: z.string(),
    depends_on: z.array(z.string()),
    status: z.enum(STAGE_STATUSES),
    attempts: z.number().int().meta({ description: 'Attempts started, at most 3' }),
    output: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The agent’s answer once succeeded' }),
    error: z.string().nullable().meta({ description: 'Why the last attempt failed' }),
    tokens_used: z.number().int(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'PipelineExecutionStage' });

export const ExecutionRecord = z
  .object({
    id: z.number().int(),
    pipeline_id: z.number().int(),
    status: z.enum(EXECUTION_STATUSES),
    inputs: z.record(z.string(), z.unknown()),
    stages: z.array(ExecutionStageRecord).meta({ description: 'In the pipeline’s stage order' }),
    stages_total: z.number().int(),
    stages_succeeded: z.number().int(),
    tokens_used: z.number().int().meta({ description: 'Consumed by the stages that succeeded so far (across reruns)' }),
    started_at: z.string(),
    finished_at: z.string().nullable(),
    reruns: z.number().int().meta({ description: 'How often the execution was rerun from its failure' }),
    rerun_at: z.string().nullable().meta({ description: 'When it was last rerun' }),
  })
  .meta({ id: 'PipelineExecution' });

const executionParams = z.object({ id: integerId('id'), executionId: integerId('executionId') });

const EXECUTION_RULES = [
  'Each stage runs once all its `depends_on` have succeeded; stages ready at once run in parallel. A stage’s ' +
    'config has its variable references filled in when it starts: `{{input.<field>}}` from `inputs`, ' +
    '`{{<stage>.<field>}}` from that ancestor’s output, built-ins from the execution (`{{task_id}}` is the ' +
    '`task_id` input, or empty). A string that is one reference alone becomes the value itself (an object, a ' +
    'number); inside other text, non-strings are written as JSON; an absent value is empty.',
  'A failed attempt (an error, a timeout after `config.timeout_sec`) is retried after a delay, up to 3 ' +
    'attempts; then the stage and the execution fail (`pipeline_failed`) and stages not started are ' +
    '`skipped`. When every stage has succeeded the execution succeeds (`pipeline_completed`). Each stage’s ' +
    'tokens are consumed from the balance when it succeeds. A run the balance cannot pay, an agent that no ' +
    'longer exists and a run error the model provider calls permanent (a refused request, no provider ' +
    'configured) fail the stage without retry.',
].join('\n\n');

export const executePipeline = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/agent-pipelines/{id}/execute',
  auth: 'bearer',
  summary: 'Execute a pipeline',
  description:
    'Starts an execution and answers 202 with it: `running`, its root stages `queued`, the others `pending`. ' +
    '`inputs` (default `{}`) must give every `{{input.<field>}}` the stages reference: otherwise 400 with ' +
    'one detail per missing field (`body.inputs.<field>`). The token balance must cover the estimate, the ' +
    `sum over stages of \`config.max_tokens\` (${DEFAULT_STAGE_TOKEN_ESTIMATE} for a stage without one): ` +
    'otherwise 402 with `needed` and `available` in the detail. Nothing is written when refused.\n\n' +
    EXECUTION_RULES,
  params,
  body: z.object({
    inputs: freeFormObject({ maxDepth: 8, maxBytes: 65_536 })
      .optional()
      .meta({ description: 'The execution’s inputs, referenced as `{{input.<field>}}`; at most 64 KB as JSON' }),
  }),
  response: ExecutionRecord,
  status: 202,
  errors: [402, 404],
});

export const listExecutions = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/agent-pipelines/{id}/executions',
  auth: 'bearer',
  summary: 'List a pipeline’s executions',
  description: 'Newest first, paged, each with its stages. An unknown pipeline is 404.',
  params,
  query: pagingQuery,
  envelope: 'list',
  response: ExecutionRecord,
  errors: [404],
});

export const getExecution = defineRoute({
  group,
  tags,
  method: 'GET',
  path: '/agent-pipelines/{id}/executions/{executionId}',
  auth: 'bearer',
  summary: 'One execution',
  description: `The execution with its stages, their outputs, errors and tokens.\n\n${EXECUTION_RULES}`,
  params: executionParams,
  response: ExecutionRecord,
  errors: [404],
});

export const cancelExecution = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/agent-pipelines/{id}/executions/{executionId}/cancel',
  auth: 'bearer',
  summary: 'Cancel an execution',
  description:
    'A queued or running execution becomes `cancelled`, with its stages not yet started. A stage running at ' +
    'that moment finishes its run, keeps its output and tokens and ends `cancelled`; nothing after it starts. ' +
    'An execution already finished (succeeded, failed, cancelled) is 409.',
  params: executionParams,
  response: ExecutionRecord,
  errors: [404, 409],
});

export const rerunExecution = defineRoute({
  group,
  tags,
  method: 'POST',
  path: '/agent-pipelines/{id}/executions/{executionId}/rerun',
  auth: 'bearer',
  summary: 'Rerun an execution from its failure',
  description:
    'Runs a `failed` or `cancelled` execution again under the same id, reusing what it already has: stages ' +
    'that succeeded are kept with their output (their `{{<stage>.<field>}}` still fill in their dependents) ' +
    'and are neither run nor paid again; a stage that finished its run after a cancel (it kept its output and ' +
    'tokens) is kept too and becomes `succeeded`. Every other stage (failed, skipped, cancelled before it ran) ' +
    'goes back to its first attempt: `queued` when all its dependencies are kept, else `pending`, with its ' +
    'error, output and times cleared. The stages run as the execution has them (later edits of the pipeline ' +
    'do not apply). The execution becomes `running` again (`finished_at` null, `reruns` counted, `rerun_at` ' +
    'set); `tokens_used` goes on adding up across runs, and at its end `pipeline_completed` or ' +
    '`pipeline_failed` is sent as for any execution.\n\n' +
    'Answers 202 with the execution and `rerun`: `stages`, the names of the stages run again in stage order, ' +
    'and `estimated_tokens`, their estimate as execute computes it (`config.max_tokens`, ' +
    `${DEFAULT_STAGE_TOKEN_ESTIMATE} for a stage without): a balance below it is 402 with \`needed\` and ` +
    '`available` in the detail, writing nothing. An execution that is running or has succeeded is 409, and so ' +
    'is one with a stage still running (within its time limit); of two reruns of one execution at once, one ' +
    'is 202 and the other 409. The body, if any, is an empty object.',
  params: executionParams,
  body: z.strictObject({}).optional(),
  response: ExecutionRecord.extend({
    rerun: z.object({
      stages: z.array(z.string()).meta({ description: 'The stages run again, in stage order' }),
      estimated_tokens: z.number().int().meta({ description: 'The estimate checked against the balance' }),
    }),
  }).meta({ id: 'PipelineExecutionRerun' }),
  status: 202,
  errors: [402, 404, 409],
});
