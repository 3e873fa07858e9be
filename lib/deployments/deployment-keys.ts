import { type TableKey, tenantPk } from '#lib/db/keys';

/**
 * Where deployments live in the table (their writes and reads: lib/deployments/deployments.ts).
 *
 * | record | pk | sk | indexes |
 * |---|---|---|---|
 * | deployment | `T#<org>` | `DEPLOYMENT#<id>` | gsi1: `T#<org>#DEPLOYMENTS` / `<created>#<id>` (newest first) |
 */
export const deploymentKeys = {
  byId: (orgId: string, deploymentId: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `DEPLOYMENT#${deploymentId}`,
  }),
  byCreatedPk: (orgId: string): string => `${tenantPk(orgId)}#DEPLOYMENTS`,
  byCreated: (orgId: string, createdAt: string, deploymentId: string) => ({
    gsi1pk: deploymentKeys.byCreatedPk(orgId),
    gsi1sk: `${createdAt}#${deploymentId}`,
  }),
};

export const DEPLOYMENT_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/**
 * What became of the organization's deploy pipeline for a deployment, as the push recorded it
 * (lib/deployments/deploy-pipeline.ts): none configured (or the one configured is gone), refused before
 * it started (`pipeline_error` says why), or started (`pipeline_execution_id`).
 */
export const STORED_PIPELINE_STATUSES = ['not_configured', 'failed_to_start', 'running'] as const;
export type PipelineStatus = (typeof STORED_PIPELINE_STATUSES)[number];

/**
 * The pipeline status the API shows: a started pipeline's as its execution has it now, so that the
 * deployment follows the execution to its end without the engine knowing of deployments.
 */
export const PIPELINE_STATUSES = [...STORED_PIPELINE_STATUSES, 'succeeded', 'failed', 'cancelled'] as const;
export type DeploymentPipelineStatus = (typeof PIPELINE_STATUSES)[number];

export interface DeploymentItem extends TableKey {
  id: string;
  status: DeploymentStatus;
  source: 'git_push' | 'deploy_webhook';
  repository?: string | null;
  branch?: string | null;
  commit_sha?: string | null;
  pusher?: string | null;
  project?: string | null;
  environment?: string | null;
  url?: string | null;
  pipeline_status?: PipelineStatus | null;
  /** The deploy pipeline the push ran or tried to run. */
  pipeline_id?: number | null;
  /** The execution the push started (with `pipeline_id`: GET /agent-pipelines/{id}/executions/{executionId}). */
  pipeline_execution_id?: number | null;
  /** Why the pipeline did not start (`failed_to_start`), or that the configured one no longer exists. */
  pipeline_error?: string | null;
  error_message?: string | null;
  created_at: string;
  updated_at: string;
}

/** A deployment as the API shows it: every field of the item, absent ones as null. */
export type Deployment = {
  [K in Exclude<keyof DeploymentItem, 'pk' | 'sk' | 'pipeline_status'>]-?: Exclude<DeploymentItem[K], undefined>;
} & { pipeline_status: DeploymentPipelineStatus | null };

export const toDeployment = (item: DeploymentItem): Deployment => ({
  id: item.id,
  status: item.status,
  source: item.source,
  repository: item.repository ?? null,
  branch: item.branch ?? null,
  commit_sha: item.commit_sha ?? null,
  pusher: item.pusher ?? null,
  project: item.project ?? null,
  environment: item.environment ?? null,
  url: item.url ?? null,
  pipeline_status: item.pipeline_status ?? null,
  pipeline_id: item.pipeline_id ?? null,
  pipeline_execution_id: item.pipeline_execution_id ?? null,
  pipeline_error: item.pipeline_error ?? null,
  error_message: item.error_message ?? null,
  created_at: item.created_at,
  updated_at: item.updated_at,
});
