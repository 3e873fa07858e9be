import { getMany } from '#lib/db/batch';
import { itemIsNew } from '#lib/db/conditions';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import type { TransactItem } from '#lib/db/transactions';
import {
  type Deployment,
  type DeploymentItem,
  type DeploymentPipelineStatus,
  type DeploymentStatus,
  deploymentKeys,
  toDeployment,
} from '#lib/deployments/deployment-keys';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { type ExecutionItem, type ExecutionStatus, executionKeys } from '#lib/pipelines/execution-keys';

export {
  DEPLOYMENT_STATUSES,
  type Deployment,
  type DeploymentPipelineStatus,
  type DeploymentStatus,
  PIPELINE_STATUSES,
  type PipelineStatus,
} from '#lib/deployments/deployment-keys';

/**
 * Deployments of an organization: recorded `pending` when a push reaches the default branch, and moved
 * to `succeeded` or `failed` by the hosting provider's deploy webhooks. GET /deployments lists them for
 * the dashboard.
 */

/** The write that records a deployment started by a push; its id is new, so it never replaces one. */
export function newDeploymentWrite(
  orgId: string,
  deployment: Omit<DeploymentItem, 'pk' | 'sk' | 'status' | 'created_at' | 'updated_at'>,
  now: Date,
): TransactItem {
  const at = now.toISOString();
  return {
    Put: {
      Item: {
        ...deploymentKeys.byId(orgId, deployment.id),
        ...deploymentKeys.byCreated(orgId, at, deployment.id),
        ...deployment,
        status: 'pending',
        created_at: at,
        updated_at: at,
      },
      ConditionExpression: itemIsNew,
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
  const index = deploymentKeys.byCreated(orgId, at, outcome.id);
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
      Key: deploymentKeys.byId(orgId, outcome.id),
      UpdateExpression: `SET ${clauses.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * GET /deployments: the organization's deployments, newest first. A deployment whose push started the
 * deploy pipeline shows the pipeline's status as its execution has it now (read with the page, one
 * BatchGetItem), so that it follows the execution to its end.
 */
export async function listDeployments(ctx: RequestContext, page: PageRequest): Promise<Page<Deployment>> {
  const principal = requirePrincipal(ctx);
  const result = await queryPage<DeploymentItem>(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': deploymentKeys.byCreatedPk(principal.orgId) },
      ScanIndexForward: false,
    },
    page,
  );
  return { items: await withPipelineOutcomes(principal.orgId, result.items), total: result.total };
}

const FROM_EXECUTION: Record<ExecutionStatus, DeploymentPipelineStatus> = {
  queued: 'running',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
};

async function withPipelineOutcomes(orgId: string, items: DeploymentItem[]): Promise<Deployment[]> {
  const started = items.filter(
    (item): item is DeploymentItem & { pipeline_id: number; pipeline_execution_id: number } =>
      item.pipeline_status === 'running' &&
      typeof item.pipeline_id === 'number' &&
      typeof item.pipeline_execution_id === 'number',
  );
  const executions = await getMany<ExecutionItem>(
    started.map((item) => executionKeys.byId(orgId, item.pipeline_id, item.pipeline_execution_id)),
  );
  const statusOf = new Map(
    started.map((item, at) => [item.id, executions[at] ? FROM_EXECUTION[executions[at].status] : undefined]),
  );
  return items.map((item) => {
    const deployment = toDeployment(item);
    const status = statusOf.get(item.id);
    return status ? { ...deployment, pipeline_status: status } : deployment;
  });
}
