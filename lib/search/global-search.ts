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
import { findRecords, type KindSource, matchesAll, matchingField } from '#lib/search/search-read';
import { postingPrefix } from '#lib/tasks/search-index';
import { type TaskItem, taskKeys } from '#lib/tasks/task-keys';
import { searchWords } from '#lib/tasks/task-queries';
import { builtInTemplates } from '#lib/templates/built-in-templates';
import { type TemplateItem, templateKeys } from '#lib/templates/template-keys';

/**
 * GET /search: one query over the organization's tasks, products, agents, templates and pipelines,
 * answered grouped by type, at most `limit` per group. Each group reads its own search index (tasks
 * theirs, the others lib/search/search-postings.ts) with a fixed number of calls, all groups side by
 * side: one Query per driving word and one BatchGetItem (lib/search/search-read.ts). Nothing reads
 * every record of a type, so the cost of a search does not grow with the organization.
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
interface TypeSource<T> extends KindSource<T> {
  result(item: T): Omit<SearchResult, 'field' | 'snippet'>;
}

const taskFields = (task: Pick<TaskItem, 'title' | 'description'>): SearchField[] => [
  ['title', task.title],
  ['description', task.description ?? null],
];

const sourcesOf = (orgId: string) => ({
  tasks: {
    prefix: (word: string) => `${postingPrefix}${word}`,
    refAttribute: 'task_id',
    key: (ref: string) => taskKeys.byId(orgId, Number(ref)),
    fields: taskFields,
    result: (task: TaskItem) => ({ type: 'task', id: task.id, title: task.title, link: `/tasks/${task.id}` }),
  } satisfies TypeSource<TaskItem>,
  products: {
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
  } satisfies TypeSource<ProductItem>,
  agents: {
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
  } satisfies TypeSource<AgentItem>,
  templates: {
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
  } satisfies TypeSource<TemplateItem>,
  pipelines: {
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
  } satisfies TypeSource<PipelineItem>,
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
      const found = await findRecords(orgId, source, queryWords, fetchWindow(input.limit));
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
