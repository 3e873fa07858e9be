import { type CheckoutResult, SESSION_TTL_SECONDS } from '#lib/billing/billing-keys';
import {
  customerLink,
  getSubscriptionItem,
  putCheckoutSession,
  subscriptionUpdate,
} from '#lib/billing/billing-records';
import {
  findPackage,
  findTier,
  packagePriceLine,
  TIERS,
  type TierDefinition,
  TOKEN_PACKAGES,
  type TokenPackage,
  tierPriceLine,
} from '#lib/billing/catalogue';
import { requireOrganization } from '#lib/billing/usage';
import { transact } from '#lib/db/transactions';
import { ValidationError } from '#lib/errors';
import { requireOrgRole } from '#lib/identity/access';
import { epochSeconds } from '#lib/identity/keys';
import type { Principal, RequestContext } from '#lib/kernel/context';
import type { CheckoutItem, PriceLine } from '#lib/kernel/ports';

/**
 * Checkout and the billing portal: a purchase starts at the payments provider (`ctx.ports.payments`)
 * with the price the catalogue sets, and completes through the payments webhook.
 */

const invalid = (path: string, message: string) => new ValidationError('The request is not valid', [{ path, message }]);

export const unknownTier = () => invalid('tier', `Unknown tier; one of ${TIERS.map((tier) => tier.id).join(', ')}`);

/** A tier sold through checkout: priced, and neither free nor by contract. */
function sellableTier(slug: string): TierDefinition & { price: PriceLine } {
  const tier = findTier(slug);
  if (!tier) throw unknownTier();
  const price = tierPriceLine(tier);
  if (!price) {
    throw invalid(
      'tier',
      tier.id === 'free' ? 'The free tier needs no checkout' : 'Enterprise is arranged by contract',
    );
  }
  return { ...tier, price };
}

/** A token package of the catalogue, or a 400 naming `package_slug`. */
export function knownPackage(slug: string): TokenPackage {
  const tokenPackage = findPackage(slug);
  if (!tokenPackage) {
    throw invalid(
      'package_slug',
      `Unknown token package; one of ${TOKEN_PACKAGES.map((known) => known.slug).join(', ')}`,
    );
  }
  return tokenPackage;
}

/**
 * What a checkout for tier `slug` sells, priced from the catalogue; a 400 naming `tier` when the tier
 * is unknown or not sold through checkout.
 *
 * @example await ctx.ports.payments.createCheckoutSession({ orgId, successUrl, cancelUrl, ...tierCheckout('pro') });
 */
export function tierCheckout(slug: string): CheckoutItem {
  const tier = sellableTier(slug);
  return { kind: 'tier', tier: tier.id, price: tier.price };
}

/** What a checkout for token package `slug` sells, priced from the catalogue. */
export function packageCheckout(slug: string): CheckoutItem {
  const tokenPackage = knownPackage(slug);
  return { kind: 'package', package: tokenPackage.slug, price: packagePriceLine(tokenPackage) };
}

const successUrl = (ctx: RequestContext) => `${ctx.baseUrl}/billing/subscription?checkout=success`;
const cancelUrl = (ctx: RequestContext) => `${ctx.baseUrl}/billing/subscription?checkout=cancelled`;

/** Opens a checkout session at the provider and remembers it (the local checkout page reads it). */
export async function openCheckout(ctx: RequestContext, orgId: string, item: CheckoutItem): Promise<CheckoutResult> {
  const { payments } = ctx.ports;
  const session = await payments.createCheckoutSession({
    orgId,
    successUrl: successUrl(ctx),
    cancelUrl: cancelUrl(ctx),
    ...item,
  });
  const now = ctx.ports.clock.now();
  const result: CheckoutResult = {
    ...session,
    kind: item.kind,
    tier: item.kind === 'tier' ? item.tier : null,
    package: item.kind === 'package' ? item.package : null,
  };
  await putCheckoutSession({
    ...result,
    org_id: orgId,
    provider: payments.kind,
    success_url: successUrl(ctx),
    created_at: now.toISOString(),
    expires_at: epochSeconds(now) + SESSION_TTL_SECONDS,
  });
  return result;
}

/** POST /billing/checkout: a token package (`package_slug`) or else a tier. */
export async function startCheckout(
  ctx: RequestContext,
  input: { tier?: string; package_slug?: string },
): Promise<CheckoutResult> {
  const { orgId } = requireOrgRole(ctx, 'admin');
  const item = input.package_slug !== undefined ? packageCheckout(input.package_slug) : tierCheckout(input.tier ?? '');
  await requireOrganization(orgId);
  return openCheckout(ctx, orgId, item);
}

/**
 * The organization's first customer at the provider, made on demand (an organization that never paid
 * opens the portal to add a payment method) and kept on its subscription record and customer link.
 */
async function newCustomer(ctx: RequestContext, principal: Principal): Promise<string> {
  const now = ctx.ports.clock.now();
  const { customerId } = await ctx.ports.payments.createCustomer({
    orgId: principal.orgId,
    name: principal.organization.name,
  });
  await transact([
    subscriptionUpdate({ orgId: principal.orgId, now, fields: { customer_id: customerId } }),
    customerLink({ customerId, orgId: principal.orgId, now }),
  ]);
  return customerId;
}

/**
 * POST /billing/portal: the provider's page where the customer manages payment methods and invoices. An
 * organization that has no customer at the provider yet gets one first.
 */
export async function openPortal(ctx: RequestContext): Promise<{ url: string }> {
  const principal = requireOrgRole(ctx, 'admin');
  const { orgId } = principal;
  const customerId = (await getSubscriptionItem(orgId))?.customer_id ?? (await newCustomer(ctx, principal));
  return ctx.ports.payments.createPortalSession({
    orgId,
    customerId,
    returnUrl: `${ctx.baseUrl}/billing/subscription`,
  });
}
