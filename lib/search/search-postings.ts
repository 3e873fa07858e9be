import { type TableKey, tenantPk } from '#lib/db/keys';
import type { TransactItem } from '#lib/db/transactions';
import { words } from '#lib/tasks/search-index';

/**
 * The search index of products, agents, organization templates and pipelines: an inverted index of
 * postings, one small item per (word, record), under the tenant's partition, of the same words as the
 * task index (lib/tasks/search-index.ts), each looked up as a prefix of the sort key. These kinds hold
 * few records, so a whole word's postings is a small read; tasks, which grow without bound, are indexed
 * by every prefix instead, to be read a page at a time. Postings are written in the transaction that
 * writes the record, so the index holds exactly the words of every record as committed, never one too
 * many or too few.
 *
 * | record | pk | sk | notes |
 * |---|---|---|---|
 * | posting | `T#<org>` | `SEARCH#<kind>#<word>#<ref>` | `ref`: the record's slug (products) or id |
 *
 * A transaction holds at most 100 writes, so a record is indexed under at most `MAX_INDEXED_WORDS`
 * distinct words, taken from its fields in order (its name first): a rename that replaces every word
 * then deletes and puts at most twice that many postings. A long description is found by its first
 * words only.
 *
 * Writes that change the indexed text must hold only while that text is still the one read (a version
 * condition, or `unchangedSince`), so that the postings a write removes are the ones that were there.
 */
export type SearchKind = 'product' | 'agent' | 'template' | 'pipeline';

export const MAX_INDEXED_WORDS = 32;

export const searchKeys = {
  posting: (orgId: string, kind: SearchKind, word: string, ref: string): TableKey => ({
    pk: tenantPk(orgId),
    sk: `SEARCH#${kind}#${word}#${ref}`,
  }),
  /** The sort key prefix of every posting of `kind` whose word begins with `word`. */
  prefix: (kind: SearchKind, word: string): string => `SEARCH#${kind}#${word}`,
};

/**
 * The distinct words a record is indexed under: the words of `texts` in order, at most
 * `MAX_INDEXED_WORDS` of them.
 *
 * @example
 * indexedWords(['Deploy bot', null, 'Deploys the site']) // ['deploy', 'bot', 'deploys', 'the', 'site']
 */
export function indexedWords(texts: ReadonlyArray<string | null | undefined>): string[] {
  const found = new Set<string>();
  for (const text of texts) {
    for (const word of words(text ?? '')) {
      if (found.size >= MAX_INDEXED_WORDS) return [...found];
      found.add(word);
    }
  }
  return [...found];
}

/**
 * The posting writes for the record `ref` of `kind` whose indexed words go from `before` (absent for a
 * new record) to `after` (absent when it leaves the index), for the transaction that writes the
 * record: puts for the words it gains, deletes for the words it loses, nothing for the others.
 *
 * @example
 * const [before, after] = [read, next].map((item) => wordsOf(pipelineSearchFields(item)));
 * writes.push(...postingWrites({ orgId, kind: 'pipeline', ref: pad(id), before, after }));
 */
export function postingWrites(input: {
  orgId: string;
  kind: SearchKind;
  ref: string;
  before?: readonly string[] | undefined;
  after?: readonly string[] | undefined;
}): TransactItem[] {
  const before = new Set(input.before ?? []);
  const after = new Set(input.after ?? []);
  const key = (word: string) => searchKeys.posting(input.orgId, input.kind, word, input.ref);
  return [
    ...[...after]
      .filter((word) => !before.has(word))
      .map((word): TransactItem => ({ Put: { Item: { ...key(word), kind: input.kind, ref: input.ref } } })),
    ...[...before].filter((word) => !after.has(word)).map((word): TransactItem => ({ Delete: { Key: key(word) } })),
  ];
}

/**
 * A condition that the fields `read` still hold the values read (a missing or null field: still none),
 * with its names and values, for an update whose postings were decided on them. Placeholders are
 * `#read_<field>` and `:read_<field>`, clear of the update's own.
 *
 * @example
 * const unchanged = unchangedSince({ name: item.name, description: item.description ?? null });
 */
export function unchangedSince(read: Record<string, string | null>): {
  condition: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
} {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const clauses = Object.entries(read).map(([field, value]) => {
    names[`#read_${field}`] = field;
    if (value === null) {
      values[':read_nullType'] = 'NULL';
      return `(attribute_not_exists(#read_${field}) OR attribute_type(#read_${field}, :read_nullType))`;
    }
    values[`:read_${field}`] = value;
    return `#read_${field} = :read_${field}`;
  });
  return { condition: clauses.join(' AND '), names, values };
}
