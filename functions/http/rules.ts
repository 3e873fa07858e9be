import { groupHandler, route } from '#lib/http/group-handler';
import * as routes from '#lib/routes/rules';
import { createRule, deleteRule, listRules, updateRule } from '#lib/rules/rules';

export const handler = groupHandler('rules', [
  route(routes.listRules, async ({ query, ctx }) => {
    const { limit, offset, ...filter } = query;
    return await listRules(ctx, filter, { limit, offset });
  }),
  route(routes.createRule, async ({ body, ctx }) => await createRule(ctx, body)),
  route(routes.updateRule, async ({ params, body, ctx }) => await updateRule(ctx, params.id, body)),
  route(routes.deleteRule, async ({ params, ctx }) => await deleteRule(ctx, params.id)),
]);
