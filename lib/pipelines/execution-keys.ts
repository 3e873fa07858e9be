import { pad, type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where pipeline executions live in the table (access patterns: lib/pipelines/execution-records.ts). An
 * execution is one run of a pipeline; each of its stages is an item of its own, so that stages running
 * side by side never write the same item, and a finished stage counts down its dependents' `remaining`
 * with an atomic ADD.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | execution | `T#<org>` | `PIPEEXEC#<pipeline id>#<execution id>` | `stages_succeeded`, `tokens_used` grow by ADD |
 * | … while running | gsi1: `PIPEEXEC#RUNNING` | `<started_at>#<org>#<pipeline id>#<id>` | the running index |
 * | stage | `T#<org>` | `PIPESTAGE#<execution id>#<stage name>` | `remaining`: dependencies not yet succeeded |
 * | execution count | `T#<org>` | `COUNTER#executions` | the sequence of execution ids (per organization) |
 *
 * Ids are padded, so an execution's stages are one Query (`PIPESTAGE#<execution id>#`) and a pipeline's
 * executions one Query, newest first when read backwards. Neither prefix begins `PIPELINE#`, so pipeline
 * lists never see them.
 *
 * A running execution carries `gsi1pk`/`gsi1sk`, removed by the update that ends it: the running index
 * holds only executions still running, so the reconciler (lib/pipelines/reconcile.ts) reads those alone.
 * A rerun (lib/pipelines/execution-rerun.ts) sets them again, with the same id and stage items.
 */
export const executionKeys = {
  byId: (orgId: string, pipelineId: number, id: number): TableKey => ({
    pk: tenantPk(orgId),
    sk: `PIPEEXEC#${pad(pipelineId)}#${pad(id)}`,
  }),
  ofPipeline: (pipelineId: number) => `PIPEEXEC#${pad(pipelineId)}#`,
  stage: (orgId: string, executionId: number, name: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `PIPESTAGE#${pad(executionId)}#${name}`,
  }),
  stagesOf: (executionId: number) => `PIPESTAGE#${pad(executionId)}#`,
  runningPk: 'PIPEEXEC#RUNNING',
  runningSort: (startedAt: string, orgId: string, pipelineId: number, id: number) =>
    `${startedAt}#${orgId}#${pad(pipelineId)}#${pad(id)}`,
  counter: 'executions',
};

/** The tokens a stage without `config.max_tokens` is expected to use, for the up-front balance check. */
export const DEFAULT_STAGE_TOKEN_ESTIMATE = 2_000;

export const EXECUTION_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

export const STAGE_STATUSES = ['pending', 'queued', 'running', 'succeeded', 'failed', 'skipped', 'cancelled'] as const;
export type StageStatus = (typeof STAGE_STATUSES)[number];

/** Statuses an execution or a stage never leaves. */
export const FINISHED_EXECUTION: ReadonlySet<ExecutionStatus> = new Set(['succeeded', 'failed', 'cancelled']);

export interface ExecutionItem extends TableKey {
  id: number;
  pipeline_id: number;
  pipeline_name: string;
  /** The pipeline's version the execution started from. */
  version: number;
  status: ExecutionStatus;
  inputs: Record<string, unknown>;
  stages_total: number;
  stages_succeeded: number;
  tokens_used: number;
  started_at: string;
  finished_at: string | null;
  created_by: string;
  /** How often the execution was rerun from its failure (lib/pipelines/execution-rerun.ts); absent before. */
  reruns?: number;
  rerun_at?: string | null;
  /** Counted in the organization's executions by status (lib/pipelines/execution-metrics.ts) since its start. */
  counted?: boolean;
  /** Present while running (the running index). */
  gsi1pk?: string;
  gsi1sk?: string;
}

export interface StageItem extends TableKey {
  execution_id: number;
  pipeline_id: number;
  name: string;
  agent: string;
  order: number;
  depends_on: string[];
  /** The stages that depend on this one, so that its success counts them down without reading the pipeline. */
  dependents: string[];
  /** Dependencies not yet succeeded; the stage is ready at 0. */
  remaining: number;
  /** The stage's config as the pipeline had it at execute time (later edits do not change a run). */
  config: Record<string, unknown>;
  status: StageStatus;
  /** Attempts started (claimed); the message of attempt n is only claimed while this is n - 1. */
  attempts: number;
  output: Record<string, unknown> | null;
  error: string | null;
  tokens_used: number;
  started_at: string | null;
  finished_at: string | null;
  /** When the stage last became `queued`; the reconciler sends again a message queued long ago. */
  queued_at?: string | null;
}

/** A stage as the API shows it. */
export interface ExecutionStage {
  name: string;
  agent: string;
  depends_on: string[];
  status: StageStatus;
  attempts: number;
  output: Record<string, unknown> | null;
  error: string | null;
  tokens_used: number;
  started_at: string | null;
  finished_at: string | null;
}

/** An execution as the API shows it: the execution with its stages, in their order. */
export interface Execution {
  id: number;
  pipeline_id: number;
  status: ExecutionStatus;
  inputs: Record<string, unknown>;
  stages: ExecutionStage[];
  stages_total: number;
  stages_succeeded: number;
  tokens_used: number;
  started_at: string;
  finished_at: string | null;
  reruns: number;
  rerun_at: string | null;
}

export const toExecutionStage = (item: StageItem): ExecutionStage => ({
  name: item.name,
  agent: item.agent,
  depends_on: item.depends_on,
  status: item.status,
  attempts: item.attempts,
  output: item.output ?? null,
  error: item.error ?? null,
  tokens_used: item.tokens_used ?? 0,
  started_at: item.started_at ?? null,
  finished_at: item.finished_at ?? null,
});

const byOrder = (a: StageItem, b: StageItem) => a.order - b.order || a.name.localeCompare(b.name);

export const toExecution = (item: ExecutionItem, stages: StageItem[]): Execution => ({
  id: item.id,
  pipeline_id: item.pipeline_id,
  status: item.status,
  inputs: item.inputs ?? {},
  stages: [...stages].sort(byOrder).map(toExecutionStage),
  stages_total: item.stages_total,
  stages_succeeded: item.stages_succeeded ?? 0,
  tokens_used: item.tokens_used ?? 0,
  started_at: item.started_at,
  finished_at: item.finished_at ?? null,
  reruns: item.reruns ?? 0,
  rerun_at: item.rerun_at ?? null,
});

/** What a stage message names: one attempt of one stage. */
export interface StageMessage {
  org_id: string;
  pipeline_id: number;
  execution_id: number;
  stage: string;
  attempt: number;
  /**
   * The stage's agent, when the sender knew it: the consumer looks the agent up while it claims the
   * stage instead of after. A hint only: the claimed stage's own agent is what runs.
   */
  agent?: string;
}
