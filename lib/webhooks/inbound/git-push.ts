import { sha256 } from '#lib/crypto/secrets';
import type { TransactItem } from '#lib/db/transactions';
import { runConfiguredDeployPipeline } from '#lib/deployments/deploy-pipeline';
import { newDeploymentWrite } from '#lib/deployments/deployments';
import { ValidationError } from '#lib/errors';
import { queueJob } from '#lib/jobs/jobs';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { type GitPush, GitPushPayload, parsePayload } from '#lib/webhooks/inbound/payloads';
import { receipt, recordDeliveryOnce, type WebhookAction, type WebhookReceipt } from '#lib/webhooks/inbound/receipts';
import { type InboundRequest, verifyInboundWebhook } from '#lib/webhooks/inbound/verification';
import { SAFE_ID } from '#lib/webhooks/inbound/webhook-keys';

/**
 * POST /webhooks/git: push events of the source-code host. A push to the repository's default branch
 * records a pending deployment (and asks for the organization's deploy pipeline); if it also adds or
 * changes logo images, a brand-assets job is queued. Pushes to other branches, tags and deleted
 * branches are acknowledged and ignored.
 */

const IMAGE_EXTENSION = /\.(?:png|jpe?g|gif|svg|webp|avif|ico|bmp|tiff?)$/i;

/** A logo is an image whose path says so (`assets/logo.svg`, `brand/logos/mark.png`). */
export const looksLikeLogo = (path: string): boolean => /logo/i.test(path) && IMAGE_EXTENSION.test(path);

/** Logo images the push adds or modifies, over every listed commit (removed files need no new assets). */
export function changedLogoFiles(push: GitPush): string[] {
  const commits = [...push.commits, ...(push.head_commit ? [push.head_commit] : [])];
  const paths = commits.flatMap((commit) => [...commit.added, ...commit.modified]);
  return [...new Set(paths.filter(looksLikeLogo))].sort();
}

/** Event names end up in responses and logs; GitHub's are short lower-case words. */
const EVENT_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The brand-assets job names at most this many files; the commit holds the rest. */
const MAX_JOB_FILES = 100;

export async function receiveGitWebhook(
  ctx: RequestContext,
  request: InboundRequest & { body: unknown },
): Promise<WebhookReceipt> {
  const now = ctx.ports.clock.now();
  const { orgId } = await verifyInboundWebhook(ctx, 'git', request);
  const event = requiredHeader(request.headers, 'x-github-event', EVENT_NAME);
  if (event === 'ping') {
    return receipt('ping', [{ type: 'pong', detail: 'The signature is valid; push events will be processed' }]);
  }
  if (event !== 'push') {
    return receipt(event, [{ type: 'ignored', detail: `${event} events are not handled; only push is` }]);
  }
  const deliveryId = requiredHeader(request.headers, 'x-github-delivery', SAFE_ID);
  const push = parsePayload(GitPushPayload, request.body);
  const plan = planPush(orgId, deliveryId, push, now);
  const outcome = await recordDeliveryOnce({
    source: 'git',
    orgId,
    eventId: deliveryId,
    // The delivery header is not covered by the signature: a captured push resent under a new delivery
    // id must still count as seen, so the exact signed body is remembered too.
    alsoOnce: [`sha256:${sha256(request.rawBody ?? '')}`],
    event: 'push',
    payload: request.body,
    now,
    writes: plan.writes,
  });
  logger.info('inbound webhook accepted', {
    source: 'git',
    event: 'push',
    org_id: orgId,
    event_id: deliveryId,
    outcome,
    actions: plan.actions.map((action) => action.type),
  });
  return receipt('push', plan.actions, outcome === 'duplicate');
}

function requiredHeader(headers: InboundRequest['headers'], name: string, pattern: RegExp): string {
  const value = headers[name]?.trim();
  if (!value)
    throw new ValidationError('The request is not valid', [{ path: `headers.${name}`, message: 'is required' }]);
  if (!pattern.test(value)) {
    throw new ValidationError('The request is not valid', [{ path: `headers.${name}`, message: 'is not valid' }]);
  }
  return value;
}

function planPush(
  orgId: string,
  deliveryId: string,
  push: GitPush,
  now: Date,
): { writes: TransactItem[]; actions: WebhookAction[] } {
  const defaultBranch = push.repository.default_branch;
  const branch = push.ref.startsWith('refs/heads/') ? push.ref.slice('refs/heads/'.length) : undefined;
  if (branch !== defaultBranch) {
    return {
      writes: [],
      actions: [{ type: 'ignored', detail: `${push.ref} is not the default branch (${defaultBranch})` }],
    };
  }
  if (push.deleted) {
    return { writes: [], actions: [{ type: 'ignored', detail: `${push.ref} was deleted` }] };
  }

  const repository = push.repository.full_name;
  const commitSha = push.after.toLowerCase();
  // One delivery records one deployment; deriving the id from it keeps the two traceable to each other.
  const deploymentId = `git-${deliveryId}`;
  const pipeline = runConfiguredDeployPipeline(orgId, { id: deploymentId, repository, commitSha });
  const writes: TransactItem[] = [
    newDeploymentWrite(
      orgId,
      {
        id: deploymentId,
        source: 'git_push',
        repository,
        branch,
        commit_sha: commitSha,
        pusher: push.pusher?.name ?? push.sender?.login ?? null,
        project: null,
        environment: null,
        url: null,
        pipeline_status: pipeline.pipelineStatus,
        error_message: null,
      },
      now,
    ),
    ...pipeline.writes,
  ];
  const actions: WebhookAction[] = [
    { type: 'deployment.recorded', id: deploymentId, status: 'pending' },
    pipeline.action,
  ];

  const logos = changedLogoFiles(push);
  if (logos.length > 0) {
    const job = queueJob(
      orgId,
      {
        type: 'brand-assets',
        payload: {
          repository,
          commit_sha: commitSha,
          files: logos.slice(0, MAX_JOB_FILES),
          file_count: logos.length,
        },
        idempotencyKey: `git:${deliveryId}`,
      },
      now,
    );
    writes.push(job.write);
    actions.push({
      type: 'job.queued',
      id: job.id,
      status: 'queued',
      detail: `brand-assets: ${logos.length} logo file(s) changed`,
    });
  }
  return { writes, actions };
}
