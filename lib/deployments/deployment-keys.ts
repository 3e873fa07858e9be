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

/** Whether the organization's deploy pipeline ran for a deployment (see `runConfiguredDeployPipeline`). */
export type PipelineStatus = 'not_configured';

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
  error_message?: string | null;
  created_at: string;
  updated_at: string;
}

/** A deployment as the API shows it: every field of the item, absent ones as null. */
export type Deployment = {
  [K in Exclude<keyof DeploymentItem, 'pk' | 'sk'>]-?: Exclude<DeploymentItem[K], undefined>;
};

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
  error_message: item.error_message ?? null,
  created_at: item.created_at,
  updated_at: item.updated_at,
});
