import { payments } from '#lib/app/payments';
import { consumeWithAutoTopup } from '#lib/billing/auto-topup';
import { groupHandler, route } from '#lib/http/group-handler';
import { consumeTokens, getTokenBalance, listTokenTransactions } from '#lib/routes/tokens';
import * as Ledger from '#lib/tokens/ledger';

export const handler = groupHandler(
  'tokens',
  [
    route(getTokenBalance, async ({ ctx }) => Ledger.balanceOf(ctx)),
    route(listTokenTransactions, async ({ query, ctx }) => await Ledger.listTransactions(ctx, query)),
    route(consumeTokens, async ({ body, ctx }) =>
      consumeWithAutoTopup(ctx, {
        amount: body.amount,
        action: body.action,
        referenceId: body.reference_id,
        metadata: body.metadata,
      }),
    ),
  ],
  { ports: { payments } },
);
