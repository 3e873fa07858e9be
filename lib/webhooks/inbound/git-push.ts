import { sha256 } from '#lib/crypto/secrets';
import { type TransactItem, transact } from '#lib/db/transactions';
import { prepareDeployPipeline } from '#lib/deployments/deploy-pipeline';
import { newDeploymentWrite } from '#lib/deployments/deployments';
import { ValidationError } from '#lib/errors';
import { queueJob } from '#lib/jobs/jobs';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import { type NewExecution, sendQueuedStages } from '#lib/pipelines/executions';
import { type GitPush, GitPushPayload, parsePayload } from '#lib/webhooks/inbound/payloads';
import {
  deliveryItemCount,
  receipt,
  recordDeliveryOnce,
  seenBefore,
  type WebhookAction,
  type WebhookReceipt,
} from '#lib/webhooks/inbound/receipts';
import { type InboundRequest, verifyInboundWebhook } from '#lib/webhooks/inbound/verification';
import { SAFE_ID } from '#lib/webhooks/inbound/webhook-keys';

/**
 * POST /webhooks/git: push events of the source-code host. A push to the repository's default branch
 * records a pending deployment and runs the organization's deploy pipeline, if it has one
 * (lib/deployments/deploy-pipeline.ts: the execution commits with the delivery, exactly once); if it
 * also adds or changes logo images, a brand-assets job is queued. Pushes to other branches, tags and
 * deleted branches are acknowledged and ignored.
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
  // The delivery header is not covered by the signature: a captured push resent under a new delivery id
  // must still count as seen, so the exact signed body is remembered too.
  const alsoOnce = [`sha256:${sha256(request.rawBody ?? '')}`];
  const log = { source: 'git', event: 'push', org_id: orgId, event_id: deliveryId };
  // A redelivery would otherwise take an execution id and write stage items for nothing.
  if (await seenBefore('git', orgId, [deliveryId, ...alsoOnce])) {
    logger.info('inbound webhook accepted', { ...log, outcome: 'duplicate', actions: [] });
    return receipt('push', [], true);
  }
  const plan = await planPush(ctx, { orgId, deliveryId, push, now, reserved: deliveryItemCount({ alsoOnce }) });
  for (const group of plan.before) await transact(group);
  const outcome = await recordDeliveryOnce({
    source: 'git',
    orgId,
    eventId: deliveryId,
    alsoOnce,
    event: 'push',
    payload: request.body,
    now,
    writes: plan.writes,
  });
  if (outcome === 'recorded' && plan.started) await sendQueuedStages(ctx, orgId, plan.started);
  logger.info('inbound webhook accepted', { ...log, outcome, actions: plan.actions.map((action) => action.type) });
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

interface PushPlan {
  /** Transactions that must land before the delivery's (stages of a big deploy pipeline). */
  before: TransactItem[][];
  /** The delivery's writes, committed with its seen guards. */
  writes: TransactItem[];
  actions: WebhookAction[];
  /** The deploy pipeline's execution, whose root stages are sent once the delivery is recorded. */
  started?: NewExecution | undefined;
}

/** `reserved`: the items the delivery's transaction holds beside these writes (guards, stored payload). */
async function planPush(
  ctx: RequestContext,
  input: { orgId: string; deliveryId: string; push: GitPush; now: Date; reserved: number },
): Promise<PushPlan> {
  const { orgId, deliveryId, push, now } = input;
  const defaultBranch = push.repository.default_branch;
  const branch = push.ref.startsWith('refs/heads/') ? push.ref.slice('refs/heads/'.length) : undefined;
  if (branch !== defaultBranch) {
    return {
      before: [],
      writes: [],
      actions: [{ type: 'ignored', detail: `${push.ref} is not the default branch (${defaultBranch})` }],
    };
  }
  if (push.deleted) {
    return { before: [], writes: [], actions: [{ type: 'ignored', detail: `${push.ref} was deleted` }] };
  }

  const repository = push.repository.full_name;
  const commitSha = push.after.toLowerCase();
  const pusher = push.pusher?.name ?? push.sender?.login ?? null;
  // One delivery records one deployment; deriving the id from it keeps the two traceable to each other.
  const deploymentId = `git-${deliveryId}`;
  const logos = changedLogoFiles(push);
  const job =
    logos.length > 0
      ? queueJob(
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
        )
      : undefined;
  const pipeline = await prepareDeployPipeline(
    ctx,
    orgId,
    { deploymentId, repository, branch, commitSha, pusher, compareUrl: push.compare ?? null },
    // Beside the execution's own items: the deployment and the job's writes.
    input.reserved + 1 + (job?.writes.length ?? 0),
  );
  const writes: TransactItem[] = [
    newDeploymentWrite(
      orgId,
      {
        id: deploymentId,
        source: 'git_push',
        repository,
        branch,
        commit_sha: commitSha,
        pusher,
        project: null,
        environment: null,
        url: null,
        ...pipeline.deployment,
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
  if (job) {
    writes.push(...job.writes);
    actions.push({
      type: 'job.queued',
      id: job.id,
      status: 'queued',
      detail: `brand-assets: ${logos.length} logo file(s) changed`,
    });
  }
  return { before: pipeline.before, writes, actions, started: pipeline.started };
}
