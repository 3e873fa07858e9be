import type { AgentItem } from '#lib/agents/agent-keys';
import type { PipelineItem } from '#lib/pipelines/pipeline-keys';
import type { ProductItem } from '#lib/products/product-keys';
import { indexedWords } from '#lib/search/search-postings';
import type { TemplateFields } from '#lib/templates/template-keys';

/**
 * What each kind of record is found by: its fields in the order they are indexed and shown, the
 * first being its title. The write side indexes these words (lib/search/search-postings.ts); the read
 * side (lib/search/global-search.ts) checks and quotes the same fields.
 */
export type SearchField = readonly [field: string, text: string | null];

/** The types GET /search answers a group for, in the order it answers them. */
export const SEARCH_TYPES = ['tasks', 'products', 'agents', 'templates', 'pipelines'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export const productSearchFields = (
  product: Pick<ProductItem, 'name' | 'slug' | 'tagline' | 'description'>,
): SearchField[] => [
  ['name', product.name],
  ['slug', product.slug],
  ['tagline', product.tagline ?? null],
  ['description', product.description ?? null],
];

export const agentSearchFields = (agent: Pick<AgentItem, 'name' | 'display_name' | 'role'>): SearchField[] => [
  ['name', agent.name],
  ['display_name', agent.display_name ?? null],
  ['role', agent.role ?? null],
];

export const templateSearchFields = (
  template: Pick<TemplateFields, 'name' | 'description'> & { slug: string },
): SearchField[] => [
  ['name', template.name],
  ['slug', template.slug],
  ['description', template.description ?? null],
];

export const pipelineSearchFields = (pipeline: Pick<PipelineItem, 'name' | 'description'>): SearchField[] => [
  ['name', pipeline.name],
  ['description', pipeline.description ?? null],
];

/** The words a record is indexed under, from its search fields. */
export const wordsOf = (fields: readonly SearchField[]): string[] => indexedWords(fields.map(([, text]) => text));
