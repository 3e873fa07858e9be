import { groupHandler } from '#lib/http/group-handler';

/** API Gateway's `$default` route: every path no group claims answers 404 in the error envelope. */
export const handler = groupHandler('not-found', []);
