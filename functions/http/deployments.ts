import * as Deployments from '#lib/deployments/deployments';
import { groupHandler, route } from '#lib/http/group-handler';
import { listOf } from '#lib/http/results';
import { listDeployments } from '#lib/routes/deployments';

export const handler = groupHandler('deployments', [
  route(listDeployments, async ({ query, ctx }) => {
    const page = await Deployments.listDeployments(ctx, query);
    return listOf(page.items, { total: page.total, limit: query.limit, offset: query.offset });
  }),
]);
