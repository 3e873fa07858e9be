import type { RequestContext } from '#lib/context';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import type { TransactItem } from '#lib/db/transactions';
import { requirePrincipal } from '#lib/identity/access';
import { deploymentsIndexPk, webhookKeys } from '#lib/webhooks/inbound/webhook-keys';

/**
 * Deployments of an organization: recorded `pending` when a push reaches the default branch, and moved
 * to `succeeded` or `failed` by the hosting provider's deploy webhooks. GET /deployments lists them for
 * the dashboard.
 */

export const DEPLOYMENT_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** Whether the organization's deploy pipeline ran for a deployment (see `runConfiguredDeployPipeline`). */
export type PipelineStatus = 'not_configured';

interface DeploymentItem {
  pk: string;
  sk: string;
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

export interface Deployment {
  id: string;
  status: DeploymentStatus;
  source: 'git_push' | 'deploy_webhook';
  repository: string | null;
  branch: string | null;
  commit_sha: string | null;
  pusher: string | null;
  project: string | null;
  environment: string | null;
  url: string | null;
  pipeline_status: PipelineStatus | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
}

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

/** The write that records a deployment started by a push; its id is new, so it never replaces one. */
export function newDeploymentWrite(
  orgId: string,
  deployment: Omit<Deployment, 'status' | 'created_at' | 'updated_at'>,
  now: Date,
): TransactItem {
  const at = now.toISOString();
  return {
    Put: {
      Item: {
        ...webhookKeys.deployment(orgId, deployment.id),
        ...webhookKeys.deploymentsByCreated(orgId, at, deployment.id),
        ...deployment,
        status: 'pending',
        created_at: at,
        updated_at: at,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/**
 * The write that sets a deployment's outcome. A deployment the service has not seen (the provider
 * deployed on its own, or the push was before this service listened) is created by the same write,
 * with what the event tells, so the dashboard shows every deployment the provider reports.
 */
export function deploymentOutcomeWrite(
  orgId: string,
  outcome: {
    id: string;
    status: Exclude<DeploymentStatus, 'pending'>;
    project?: string | undefined;
    environment?: string | undefined;
    commitSha?: string | undefined;
    url?: string | undefined;
    errorMessage?: string | undefined;
  },
  now: Date,
): TransactItem {
  const at = now.toISOString();
  const index = webhookKeys.deploymentsByCreated(orgId, at, outcome.id);
  // Every attribute goes through a name placeholder: some (status, source, url…) are or may become
  // DynamoDB reserved words.
  const set: Record<string, unknown> = {
    id: outcome.id,
    status: outcome.status,
    updated_at: at,
    // A success clears the message of an earlier failed attempt of the same deployment.
    error_message: outcome.errorMessage ?? null,
  };
  const given: Record<string, string | undefined> = {
    project: outcome.project,
    environment: outcome.environment,
    commit_sha: outcome.commitSha,
    url: outcome.url,
  };
  for (const [name, value] of Object.entries(given)) if (value !== undefined) set[name] = value;
  const setOnce: Record<string, unknown> = {
    source: 'deploy_webhook',
    created_at: at,
    gsi1pk: index.gsi1pk,
    gsi1sk: index.gsi1sk,
  };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const clauses: string[] = [];
  for (const [name, value] of Object.entries(set)) {
    names[`#${name}`] = name;
    values[`:${name}`] = value;
    clauses.push(`#${name} = :${name}`);
  }
  for (const [name, value] of Object.entries(setOnce)) {
    names[`#${name}`] = name;
    values[`:${name}`] = value;
    clauses.push(`#${name} = if_not_exists(#${name}, :${name})`);
  }
  return {
    Update: {
      Key: webhookKeys.deployment(orgId, outcome.id),
      UpdateExpression: `SET ${clauses.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/** GET /deployments: the organization's deployments, newest first. */
export async function listDeployments(ctx: RequestContext, page: PageRequest): Promise<Page<Deployment>> {
  const principal = requirePrincipal(ctx);
  const result = await queryPage<DeploymentItem>(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': deploymentsIndexPk(principal.orgId) },
      ScanIndexForward: false,
    },
    page,
  );
  return { items: result.items.map(toDeployment), total: result.total };
}
