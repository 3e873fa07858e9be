import { tenantPk } from '#lib/db/keys';
import { type QueryResult, table } from '#lib/db/table';
import { getUsersByIds } from '#lib/identity/users';
import type { RequestContext } from '#lib/kernel/context';
import { logger } from '#lib/logger';

/**
 * "Team notified": the organization's owners and admins are the people who can act on a failed
 * deployment, so they get the email.
 */

/** The user ids of the organization's owners and admins (its membership items, one Query). */
export async function ownerAndAdminIds(orgId: string): Promise<number[]> {
  const ids: number[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page: QueryResult = await table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :member)',
      FilterExpression: '#role IN (:owner, :admin)',
      ProjectionExpression: 'user_id',
      ExpressionAttributeNames: { '#role': 'role' },
      ExpressionAttributeValues: {
        ':pk': tenantPk(orgId),
        ':member': 'MEMBER#',
        ':owner': 'owner',
        ':admin': 'admin',
      },
      ExclusiveStartKey: startKey,
    });
    for (const item of page.Items ?? []) ids.push(Number(item.user_id));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return ids;
}

/**
 * Emails the organization's owners and admins; returns how many messages went out. The alert is already
 * committed, so a failed email is logged (without the address) and does not fail the webhook: the
 * provider would only resend an event the service has already recorded.
 */
export async function emailOwnersAndAdmins(
  ctx: RequestContext,
  orgId: string,
  message: { subject: string; text: string },
): Promise<number> {
  const users = await getUsersByIds(await ownerAndAdminIds(orgId));
  const results = await Promise.allSettled(
    users.map((user) => ctx.ports.email.send({ to: user.email, subject: message.subject, text: message.text })),
  );
  const failed = results.filter((result) => result.status === 'rejected');
  if (failed.length > 0) {
    // Only the error's name: mail providers quote the refused address in their messages.
    logger.warn('some alert emails were not sent', {
      org_id: orgId,
      failed: failed.length,
      error_name: ((failed[0] as PromiseRejectedResult).reason as Error | undefined)?.name ?? 'unknown',
    });
  }
  return results.length - failed.length;
}
