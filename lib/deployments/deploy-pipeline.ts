import type { TransactItem } from '#lib/db/transactions';
import type { PipelineStatus } from '#lib/deployments/deployments';
import { getPipelineItem } from '#lib/pipelines/pipeline-records';
import type { WebhookAction } from '#lib/webhooks/inbound/receipts';

export interface DeployPipelineRun {
  /** What the deployment records about its pipeline. */
  pipelineStatus: PipelineStatus;
  /** Writes that start the run, committed in the same transaction as the deployment. */
  writes: TransactItem[];
  action: WebhookAction;
}

/**
 * Runs the organization's configured deploy pipeline for a deployment that a push to the default branch
 * started. Agent pipelines, and the setting that names an organization's deploy pipeline, are a later
 * issue: no organization can have one yet, so this answers that none is configured and the deployment
 * records exactly that (it stays `pending` until the hosting provider reports an outcome).
 *
 * The run is returned as writes instead of being started here, so that the pipeline's first queued
 * stage can commit in the same transaction as the deployment and the delivery's seen guard: a crash can
 * then neither lose the trigger nor fire it twice.
 */
export function runConfiguredDeployPipeline(
  _orgId: string,
  _deployment: { id: string; repository: string; commitSha: string },
): DeployPipelineRun {
  return {
    pipelineStatus: 'not_configured',
    writes: [],
    action: {
      type: 'deploy_pipeline.not_configured',
      detail: 'No deploy pipeline is configured for this organization; the deployment stays pending',
    },
  };
}

/**
 * Why `pipelineId` cannot be the organization's deploy pipeline (PATCH /tenant-config), or undefined
 * when it can: it must name a pipeline of the organization.
 */
export async function deployPipelineProblem(orgId: string, pipelineId: number): Promise<string | undefined> {
  const pipeline = await getPipelineItem({ orgId, id: pipelineId });
  return pipeline ? undefined : `names no pipeline of this organization (GET /agent-pipelines lists them)`;
}
