import { readCredentialValue } from '#lib/credentials/store';
import { UnauthorizedError } from '#lib/errors';
import { getOrganizationItem } from '#lib/identity/organizations';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';
import {
  checkHubSignature,
  checkTimestampedSignature,
  type SignatureCheck,
  type VerificationFailure,
} from '#lib/webhooks/inbound/signatures';
import type { WebhookSource } from '#lib/webhooks/inbound/webhook-keys';

/**
 * Verifies an inbound webhook against its organization's secret. Every failure answers the same 401 with
 * the same message: telling a caller which check failed would tell it which organizations exist, which
 * have a secret and how close its forgery came. The reason goes to the log (never the secret, the
 * signature or the body).
 */

export const INVALID_SIGNATURE_MESSAGE = 'Invalid webhook signature';

/** The credential-store key of each source's signing secret. */
export const SECRET_KEYS: Record<WebhookSource, string> = {
  git: 'webhook.git.secret',
  deploy: 'webhook.deploy.secret',
  chat: 'webhook.chat.secret',
};

/** Organization ids are `org_` plus base62; anything far from that cannot name one and is not looked up. */
const PLAUSIBLE_ORG_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface InboundRequest {
  orgId: string | undefined;
  headers: Record<string, string | undefined>;
  rawBody: string | undefined;
}

/** The organization the webhook is for, once its signature holds against that organization's secret. */
export async function verifyInboundWebhook(
  ctx: RequestContext,
  source: WebhookSource,
  request: InboundRequest,
): Promise<{ orgId: string }> {
  const orgId = request.orgId?.trim();
  const fail = (reason: VerificationFailure): never => {
    logger.info('inbound webhook rejected', {
      source,
      reason,
      // The id as the caller sent it, cut short: enough to find a misconfigured sender, not a log flood.
      org_id: orgId?.slice(0, 64) ?? null,
    });
    throw new UnauthorizedError(INVALID_SIGNATURE_MESSAGE);
  };
  if (!orgId || !PLAUSIBLE_ORG_ID.test(orgId)) return fail('unknown_org');
  const organization = await getOrganizationItem(orgId);
  if (!organization) return fail('unknown_org');
  const secret = await readCredentialValue(ctx, orgId, SECRET_KEYS[source]);
  if (!secret) return fail('no_secret');
  const check = checkSignature(source, secret, request, ctx.ports.clock.now());
  if (!check.ok) return fail(check.reason);
  return { orgId };
}

function checkSignature(source: WebhookSource, secret: string, request: InboundRequest, now: Date): SignatureCheck {
  // An absent body is verified as the empty string: a sender that signs nothing still has to sign it.
  const rawBody = request.rawBody ?? '';
  if (source === 'git') return checkHubSignature(secret, rawBody, request.headers['x-hub-signature-256']);
  return checkTimestampedSignature({
    secret,
    rawBody,
    timestamp: request.headers['x-webhook-timestamp'],
    signature: request.headers['x-webhook-signature'],
    now,
  });
}
