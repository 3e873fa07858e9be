import { type AgentItem, agentKeys } from '#lib/agents/agent-keys';
import { requirePrincipal } from '#lib/identity/access';
import type { RequestContext } from '#lib/kernel/context';
import { type PipelineItem, pipelineKeys } from '#lib/pipelines/pipeline-keys';
import { type ProductItem, productKeys } from '#lib/products/product-keys';
import {
  agentSearchFields,
  pipelineSearchFields,
  productSearchFields,
  SEARCH_TYPES,
  type SearchField,
  type SearchType,
  templateSearchFields,
} from '#lib/search/search-fields';
import { searchKeys } from '#lib/search/search-postings';
import { type Found, findRecords, type KindSource, matchesAll, matchingField } from '#lib/search/search-read';
import { matchesSearch } from '#lib/tasks/search-index';
import type { TaskItem } from '#lib/tasks/task-keys';
import { searchWords } from '#lib/tasks/task-queries';
import { searchTasks } from '#lib/tasks/task-search';
import { builtInTemplates } from '#lib/templates/built-in-templates';
import { type TemplateItem, templateKeys } from '#lib/templates/template-keys';

/**
 * GET /search: one query over the organization's tasks, products, agents, templates and pipelines,
 * answered grouped by type, at most `limit` per group, all groups side by side. Tasks are read from
 * their own index a page at a time, the newest first (lib/tasks/task-search.ts: one Query of postings
 * and one BatchGetItem for a word); the other types from lib/search/search-postings.ts with one Query
 * per driving word and one BatchGetItem (lib/search/search-read.ts). Nothing reads every record of a
 * type, so the cost of a search does not grow with the organization.
 *
 * Files and rules are not records of this service (yet): their groups are not answered, rather than
 * answered empty as if they had been searched.
 */

export interface SearchResult {
  type: 'task' | 'product' | 'agent' | 'template' | 'pipeline';
  id: number;
  title: string;
  /** The field shown in `snippet`: the first that matches, the title's when it does. */
  field: string;
  snippet: string;
  /** The record's path below the API's base URL. */
  link: string;
}

export interface SearchGroup {
  items: SearchResult[];
  /** Whether there may be more matches than shown. */
  more: boolean;
}

export interface SearchAnswer {
  q: string;
  limit: number;
  groups: Partial<Record<SearchType, SearchGroup>>;
}

/** How a type's records are found and shown. */
interface TypeSource<T> extends Pick<KindSource<T>, 'fields'> {
  /** Up to `fetch` records that hold every word, and whether there may be more. */
  find(queryWords: readonly string[], fetch: number): Promise<Found<T>>;
  result(item: T): Omit<SearchResult, 'field' | 'snippet'>;
}

/** A type found through lib/search/search-postings.ts. */
function indexed<T>(orgId: string, source: KindSource<T> & Pick<TypeSource<T>, 'result'>): TypeSource<T> {
  return { ...source, find: (queryWords, fetch) => findRecords(orgId, source, queryWords, fetch) };
}

/** The newest `fetch` tasks that hold every word (no total: a group says only whether there are more). */
async function findTasks(orgId: string, queryWords: readonly string[], fetch: number): Promise<Found<TaskItem>> {
  const matches = (task: TaskItem) => matchesSearch([...queryWords], task);
  const search = { queryWords, matches, filtered: false, total: false };
  const found = await searchTasks(orgId, search, { limit: fetch, offset: 0 });
  return { items: found.items, more: found.more };
}

const taskFields = (task: Pick<TaskItem, 'title' | 'description'>): SearchField[] => [
  ['title', task.title],
  ['description', task.description ?? null],
];

const sourcesOf = (orgId: string) => ({
  tasks: {
    find: (queryWords: readonly string[], fetch: number) => findTasks(orgId, queryWords, fetch),
    fields: taskFields,
    result: (task: TaskItem) => ({ type: 'task', id: task.id, title: task.title, link: `/tasks/${task.id}` }),
  } satisfies TypeSource<TaskItem>,
  products: indexed(orgId, {
    prefix: (word: string) => searchKeys.prefix('product', word),
    refAttribute: 'ref',
    key: (ref: string) => productKeys.bySlug(orgId, ref),
    fields: productSearchFields,
    result: (product: ProductItem) => ({
      type: 'product',
      id: product.id,
      title: product.name,
      link: `/products/${product.slug}`,
    }),
  }),
  agents: indexed(orgId, {
    prefix: (word: string) => searchKeys.prefix('agent', word),
    refAttribute: 'ref',
    key: (ref: string) => agentKeys.byId(orgId, Number(ref)),
    fields: agentSearchFields,
    result: (agent: AgentItem) => ({
      type: 'agent',
      id: agent.id,
      title: agent.display_name ?? agent.name,
      link: `/v1/public/agents/${agent.id}`,
    }),
  }),
  templates: indexed(orgId, {
    prefix: (word: string) => searchKeys.prefix('template', word),
    refAttribute: 'ref',
    key: (ref: string) => templateKeys.byId(orgId, Number(ref)),
    fields: templateSearchFields,
    visible: (template: TemplateItem) => template.status === 'active',
    result: (template: TemplateItem) => ({
      type: 'template',
      id: template.id,
      title: template.name,
      link: `/agent-templates/${template.slug}`,
    }),
  }),
  pipelines: indexed(orgId, {
    prefix: (word: string) => searchKeys.prefix('pipeline', word),
    refAttribute: 'ref',
    key: (ref: string) => pipelineKeys.byId(orgId, Number(ref)),
    fields: pipelineSearchFields,
    result: (pipeline: PipelineItem) => ({
      type: 'pipeline',
      id: pipeline.id,
      title: pipeline.name,
      link: `/agent-pipelines/${pipeline.id}`,
    }),
  }),
});

export async function globalSearch(
  ctx: RequestContext,
  input: { q: string; limit: number; types?: readonly SearchType[] | undefined },
): Promise<SearchAnswer> {
  const orgId = requirePrincipal(ctx).orgId;
  const queryWords = searchWords(input.q);
  const sources = sourcesOf(orgId);
  const types = SEARCH_TYPES.filter((type) => input.types === undefined || input.types.includes(type));
  const groups = await Promise.all(
    types.map(async (type): Promise<[SearchType, SearchGroup]> => {
      const source = sources[type] as TypeSource<unknown>;
      const found = await source.find(queryWords, fetchWindow(input.limit));
      const extra = type === 'templates' ? builtInResults(queryWords) : [];
      const results = [...found.items.map((item) => toResult(source, item, queryWords)), ...extra];
      return [type, shown(results, input.limit, found.more)];
    }),
  );
  return { q: input.q, limit: input.limit, groups: Object.fromEntries(groups) };
}

/**
 * Candidates read per group: twice what is shown, so that a few stale task postings (or candidates a
 * query word outside the driving ones rules out) still leave a full group.
 */
const fetchWindow = (limit: number): number => Math.max(2 * limit, 10);

function toResult<T>(source: TypeSource<T>, item: T, queryWords: readonly string[]): SearchResult {
  return { ...source.result(item), ...matchingField(queryWords, source.fields(item)) };
}

/** The built-in templates, which live in code, checked in memory. */
function builtInResults(queryWords: readonly string[]): SearchResult[] {
  return builtInTemplates()
    .filter((template) => matchesAll(queryWords, templateSearchFields(template)))
    .map((template) => ({
      type: 'template' as const,
      id: template.id,
      title: template.name,
      link: `/agent-templates/${template.slug}`,
      ...matchingField(queryWords, templateSearchFields(template)),
    }));
}

const TITLE_FIELDS: ReadonlySet<string> = new Set(['title', 'name', 'display_name']);

/** A group's first `limit` results: those matching in their title first, then the newest. */
function shown(results: SearchResult[], limit: number, more: boolean): SearchGroup {
  const inTitle = (result: SearchResult) => Number(TITLE_FIELDS.has(result.field));
  const sorted = [...results].sort((a, b) => inTitle(b) - inTitle(a) || b.id - a.id);
  return { items: sorted.slice(0, limit), more: more || sorted.length > limit };
}
