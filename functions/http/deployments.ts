import * as Deployments from '#lib/deployments/deployments';
import { groupHandler, route } from '#lib/http/group-handler';
import { listDeployments } from '#lib/routes/deployments';

export const handler = groupHandler('deployments', [
  route(listDeployments, async ({ query, ctx }) => await Deployments.listDeployments(ctx, query)),
]);
