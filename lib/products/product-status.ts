/**
 * Product states. The specification uses three vocabularies: the record (idea, building, launched,
 * archived), create bodies (active, building, archived) and update bodies (also live, placeholder).
 * The record keeps the first; the others are mapped onto it by this one table, which the OpenAPI
 * document repeats.
 *
 * | given | stored | accepted on |
 * |---|---|---|
 * | idea | idea | create, update, filter |
 * | placeholder | idea | update, filter |
 * | building | building | create, update, filter |
 * | active | launched | create, update, filter |
 * | live | launched | update, filter |
 * | launched | launched | create, update, filter |
 * | archived | archived | create, update, filter |
 */
export const PRODUCT_STATUSES = ['idea', 'building', 'launched', 'archived'] as const;
export type ProductStatus = (typeof PRODUCT_STATUSES)[number];

export const PRODUCT_STATUS_ALIASES = {
  idea: 'idea',
  placeholder: 'idea',
  building: 'building',
  active: 'launched',
  live: 'launched',
  launched: 'launched',
  archived: 'archived',
} as const satisfies Record<string, ProductStatus>;

export const PRODUCT_CREATE_STATUSES = ['idea', 'building', 'active', 'launched', 'archived'] as const;
export const PRODUCT_UPDATE_STATUSES = [
  'idea',
  'placeholder',
  'building',
  'active',
  'live',
  'launched',
  'archived',
] as const;
export type ProductStatusInput = keyof typeof PRODUCT_STATUS_ALIASES;

export const toProductStatus = (input: ProductStatusInput): ProductStatus => PRODUCT_STATUS_ALIASES[input];

/** A new product without a status is an idea. */
export const DEFAULT_PRODUCT_STATUS: ProductStatus = 'idea';

export const productStatusTableMarkdown = (): string =>
  [
    '| given | stored |',
    '|---|---|',
    ...Object.entries(PRODUCT_STATUS_ALIASES).map(([given, stored]) => `| ${given} | ${stored} |`),
  ].join('\n');
