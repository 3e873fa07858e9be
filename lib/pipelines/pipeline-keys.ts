import { pad, type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where agent pipelines live in the table (access patterns: lib/pipelines/pipeline-records.ts). A pipeline
 * is a definition: its stages, their agents and how they depend on each other. Executions, when they
 * come, are records of their own that name the pipeline and the `version` they started from.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | pipeline | `T#<org>` | `PIPELINE#<id>` | `version` is raised by every write |
 * | name guard | `T#<org>` | `PIPELINENAME#<lowercased name>` | `pipeline_id`; one name per organization |
 * | pipeline count | `T#<org>` | `COUNTER#pipelines` | the sequence of pipeline ids |
 *
 * Names are unique regardless of case (`Deploy` and `deploy` are one name) and may change: a rename
 * moves the guard in the transaction that writes the pipeline.
 */
export const pipelineKeys = {
  byId: (orgId: string, id: number): TableKey => ({ pk: tenantPk(orgId), sk: `PIPELINE#${pad(id)}` }),
  /** `PIPELINE#` ranges over pipelines only: guards begin `PIPELINEN…`, not `PIPELINE#`. */
  prefix: 'PIPELINE#',
  byName: (orgId: string, name: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `PIPELINENAME#${name.toLowerCase()}`,
  }),
  counter: 'pipelines',
};

/** At most this many stages per pipeline. */
export const MAX_STAGES = 200;
export const PIPELINE_NAME_MAX = 200;
export const PIPELINE_DESCRIPTION_MAX = 5000;

/**
 * A stage name: it appears in references (`{{build.summary}}`), so it holds no dot, brace or space;
 * lowercase letters, digits, `_` and `-`, starting with a letter, at most 64 characters. `input` is
 * reserved: `{{input.<field>}}` names the execution's inputs.
 */
export const STAGE_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;
export const RESERVED_STAGE_NAMES: ReadonlySet<string> = new Set(['input']);

/**
 * `config.timeout_sec`: the seconds a stage may run, 1 to 840; 300 when not given. The stage function
 * may run 900 s: the other 60 are for the stage's reads and the writes that end it.
 */
export const STAGE_TIMEOUT_MAX = 840;
export const STAGE_TIMEOUT_DEFAULT = 300;

/**
 * One stage. `agent` is an agent name of the organization or a template slug (a built-in or one of the
 * organization's active templates); an agent of that name wins over a template of that slug. `order`
 * breaks ties among stages ready at the same time; `depends_on` decides what is ready.
 */
export interface Stage {
  name: string;
  agent: string;
  order: number;
  depends_on: string[];
  /**
   * Passed to the agent; string values may hold `{{…}}` references (lib/pipelines/pipeline-validation.ts).
   * `max_tokens` caps the stage's tokens, `timeout_sec` its run time.
   */
  config: Record<string, unknown>;
}

export interface PipelineItem extends TableKey {
  id: number;
  name: string;
  description: string;
  stages: Stage[];
  /** Raised by every write; writes are conditional on the version read, executions record the one they ran. */
  version: number;
  created_at: string;
  updated_at: string;
  created_by: string;
  /** Counted in the organization's `pipelines` total (lib/metrics) since its creation. */
  counted?: boolean;
}

export interface PipelineNameItem extends TableKey {
  pipeline_id: number;
}

/** A pipeline as the API shows it. */
export interface Pipeline {
  id: number;
  name: string;
  description: string;
  stages: Stage[];
  created_at: string;
  updated_at: string;
}

export const toPipeline = (item: PipelineItem): Pipeline => ({
  id: item.id,
  name: item.name,
  description: item.description ?? '',
  stages: structuredClone(item.stages ?? []),
  created_at: item.created_at,
  updated_at: item.updated_at,
});

/** The stage's time limit in seconds (its `config.timeout_sec`, or the default). */
export const stageTimeoutSec = (stage: Pick<Stage, 'config'>): number =>
  typeof stage.config.timeout_sec === 'number' ? stage.config.timeout_sec : STAGE_TIMEOUT_DEFAULT;

/** The pipeline is as the writer read it (`:version`). */
export const pipelineVersionIs = 'version = :version';
/** The name guard still names the pipeline (`:id`). */
export const guardNames = 'pipeline_id = :id';
