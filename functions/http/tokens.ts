import { consumeWithAutoTopup } from '#lib/billing/auto-topup';
import { groupHandler, route } from '#lib/http/group-handler';
import { listOf } from '#lib/http/results';
import { consumeTokens, getTokenBalance, listTokenTransactions } from '#lib/routes/tokens';
import * as Ledger from '#lib/tokens/ledger';
import { paymentsProvider } from '#lib/wiring-payments';

export const handler = groupHandler('tokens', [
  route(getTokenBalance, async ({ ctx }) => Ledger.balanceOf(ctx)),
  route(listTokenTransactions, async ({ query, ctx }) => {
    const page = await Ledger.listTransactions(ctx, query);
    return listOf(page.items, { total: page.total, limit: query.limit, offset: query.offset });
  }),
  route(consumeTokens, async ({ body, ctx }) =>
    consumeWithAutoTopup(ctx, paymentsProvider(), {
      amount: body.amount,
      action: body.action,
      referenceId: body.reference_id,
      metadata: body.metadata,
    }),
  ),
]);
