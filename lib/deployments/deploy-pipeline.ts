import type { TransactItem } from '#lib/db/transactions';
import type { DeploymentItem } from '#lib/deployments/deployment-keys';
import { type AppError, PaymentRequiredError, ValidationError } from '#lib/errors';
import type { RequestContext } from '#lib/kernel/context';
import { executionStartWrites } from '#lib/pipelines/execution-metrics';
import { newExecutionTransactions } from '#lib/pipelines/execution-records';
import { type NewExecution, newExecution } from '#lib/pipelines/executions';
import type { PipelineItem } from '#lib/pipelines/pipeline-keys';
import { getPipelineItem } from '#lib/pipelines/pipeline-records';
import type { WebhookAction } from '#lib/webhooks/inbound/receipts';
import { getTenantConfigItem } from '#lib/webhooks/outbound/tenant-config-records';

/**
 * Runs the organization's deploy pipeline (PATCH /tenant-config `deploy_pipeline_id`) for a deployment
 * that a push to the default branch records.
 *
 * Exactly once, by construction rather than by a later consumer: the execution is prepared here (its
 * checks, its id, its items) and written by the push's own transaction, the one that holds the
 * delivery's seen guard and the deployment. The execution item, the only one readers find an execution
 * by, always lands in that transaction; stages that do not fit beside it (a pipeline of more than about
 * 90 stages) are written just before, unreachable until it lands (lib/pipelines/execution-records.ts).
 * So the execution exists exactly when the delivery was recorded: a redelivered push fails the guard and
 * writes nothing, and a crash before the commit leaves no guard, so the provider's retry starts it
 * then. The root stages are written `queued`; their messages are sent after the commit, and a send
 * lost to a crash or refused by the queue is sent again by the pipeline reconciler (a stage queued for
 * two minutes). A durable "start the pipeline" job for a consumer would add a worker the job queue does
 * not have yet and could not tell the provider's receipt the execution id or why it did not start.
 *
 * What cannot start (a token balance below the estimate, an input a stage references that a push does
 * not give, a pipeline deleted since it was configured) is recorded on the deployment and told in the
 * receipt; the webhook still answers 200, since a retry by the provider would change nothing.
 */

/** What a push gives the pipeline; each field is an input of the execution (`{{input.<field>}}`). */
export interface DeployPush {
  deploymentId: string;
  repository: string;
  branch: string;
  commitSha: string;
  pusher: string | null;
  compareUrl: string | null;
}

export interface DeployPipelineRun {
  /** What the deployment records about its pipeline. */
  deployment: Pick<DeploymentItem, 'pipeline_status' | 'pipeline_id' | 'pipeline_execution_id' | 'pipeline_error'>;
  /** Transactions to commit before the delivery's: stages that do not fit in it, unreachable alone. */
  before: TransactItem[][];
  /** Writes committed in the delivery's transaction, with the deployment and the seen guard. */
  writes: TransactItem[];
  action: WebhookAction;
  /** The execution started, whose root stages are sent once the delivery's transaction landed. */
  started?: NewExecution;
}

const NOT_STARTED = { before: [], writes: [] };

/**
 * The deploy pipeline's run for a push, as writes for the push's transaction. `reserved` is how many
 * items that transaction holds beside the execution's (guards, stored payload, deployment, jobs).
 */
export async function prepareDeployPipeline(
  ctx: RequestContext,
  orgId: string,
  push: DeployPush,
  reserved: number,
): Promise<DeployPipelineRun> {
  const pipelineId = (await getTenantConfigItem(orgId))?.deploy_pipeline_id;
  if (pipelineId === undefined) {
    return {
      ...NOT_STARTED,
      deployment: { pipeline_status: 'not_configured' },
      action: {
        type: 'deploy_pipeline.not_configured',
        detail: 'No deploy pipeline is configured for this organization; the deployment stays pending',
      },
    };
  }
  const pipeline = await getPipelineItem({ orgId, id: pipelineId });
  if (!pipeline) {
    const reason =
      `The configured deploy pipeline ${pipelineId} no longer exists; nothing ran and the deployment stays ` +
      'pending (PATCH /tenant-config names another)';
    return {
      ...NOT_STARTED,
      deployment: { pipeline_status: 'not_configured', pipeline_id: pipelineId, pipeline_error: reason },
      action: { type: 'deploy_pipeline.not_configured', detail: reason },
    };
  }
  return await startPipeline(ctx, orgId, pipeline, push, reserved);
}

async function startPipeline(
  ctx: RequestContext,
  orgId: string,
  pipeline: PipelineItem,
  push: DeployPush,
  reserved: number,
): Promise<DeployPipelineRun> {
  let created: NewExecution;
  try {
    created = await newExecution(ctx, {
      orgId,
      pipeline,
      inputs: deployInputs(push),
      createdBy: `deployment:${push.deploymentId}`,
    });
  } catch (error) {
    if (!(error instanceof ValidationError || error instanceof PaymentRequiredError)) throw error;
    const reason = refusal(error);
    return {
      ...NOT_STARTED,
      deployment: { pipeline_status: 'failed_to_start', pipeline_id: pipeline.id, pipeline_error: reason },
      action: { type: 'deploy_pipeline.failed_to_start', status: 'failed_to_start', detail: reason },
    };
  }
  const { execution } = created;
  const actor = { actor_type: 'system' as const, actor_id: `deployment:${push.deploymentId}` };
  const started = executionStartWrites(orgId, execution, actor, ctx.ports.clock.now());
  const groups = newExecutionTransactions(execution, created.stages, reserved + started.length);
  return {
    deployment: { pipeline_status: 'running', pipeline_id: pipeline.id, pipeline_execution_id: execution.id },
    before: groups.slice(0, -1),
    writes: [...(groups.at(-1) ?? []), ...started],
    action: {
      type: 'deploy_pipeline.started',
      id: String(execution.id),
      status: 'running',
      detail:
        `Pipeline ${pipeline.id} (${pipeline.name}) started as execution ${execution.id}: ` +
        `GET /agent-pipelines/${pipeline.id}/executions/${execution.id}`,
    },
    started: created,
  };
}

/** The execution's inputs; `pusher` and `compare_url` only when the push tells them. */
function deployInputs(push: DeployPush): Record<string, unknown> {
  return {
    repository: push.repository,
    branch: push.branch,
    commit_sha: push.commitSha,
    deployment_id: push.deploymentId,
    ...(push.pusher === null ? {} : { pusher: push.pusher }),
    ...(push.compareUrl === null ? {} : { compare_url: push.compareUrl }),
  };
}

/** Why execute refused, in one sentence for the deployment and the receipt. */
function refusal(error: AppError): string {
  const details = error.details as Array<{ path: string; message: string }>;
  const parts =
    error instanceof PaymentRequiredError
      ? details.map((detail) => detail.message)
      : details.map((detail) => `${detail.path} ${detail.message}`);
  return `The deploy pipeline did not start: ${error.message} (${parts.join('; ')})`;
}

/**
 * Why `pipelineId` cannot be the organization's deploy pipeline (PATCH /tenant-config), or undefined
 * when it can: it must name a pipeline of the organization.
 */
export async function deployPipelineProblem(orgId: string, pipelineId: number): Promise<string | undefined> {
  const pipeline = await getPipelineItem({ orgId, id: pipelineId });
  return pipeline ? undefined : 'names no pipeline of this organization (GET /agent-pipelines lists them)';
}
