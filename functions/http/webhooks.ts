import { email } from '#lib/app/email';
import { keys } from '#lib/app/keys';
import { queue } from '#lib/app/queue';
import { groupHandler, type RouteBinding, route } from '#lib/http/group-handler';
import { chatWebhook, deployWebhook, gitWebhook } from '#lib/routes/webhooks';
import { receiveChatMessage } from '#lib/webhooks/inbound/chat-messages';
import { receiveDeployWebhook } from '#lib/webhooks/inbound/deploy-events';
import { receiveGitWebhook } from '#lib/webhooks/inbound/git-push';

/** Exported so that tests can serve the same routes with a clock they set (the replay window). */
export const bindings: RouteBinding[] = [
  route(gitWebhook, async ({ query, headers, rawBody, body, ctx }) =>
    receiveGitWebhook(ctx, { orgId: query.org, headers, rawBody, body }),
  ),
  route(deployWebhook, async ({ query, headers, rawBody, body, ctx }) =>
    receiveDeployWebhook(ctx, { orgId: query.org, headers, rawBody, body }),
  ),
  route(chatWebhook, async ({ query, headers, rawBody, body, ctx }) =>
    receiveChatMessage(ctx, { orgId: query.org, headers, rawBody, body }),
  ),
];

/** A push to the default branch may start the deploy pipeline, whose root stages go to the stage queue. */
export const handler = groupHandler('webhooks', bindings, { ports: { keys, email, queue } });
