/**
 * Conditions every entity uses, named once. Entity modules name their own (`versionIs`, `notClaimed`)
 * beside their keys and join clauses with `allOf` / `anyOf`.
 *
 * @example
 * ConditionExpression: allOf(itemExists, '#version = :version')
 */

/** The write creates the item or fails. */
export const itemIsNew = 'attribute_not_exists(pk)';
/** The item must already exist: an update never creates a half-filled record. */
export const itemExists = 'attribute_exists(pk)';

export const allOf = (...clauses: string[]): string => clauses.map((clause) => `(${clause})`).join(' AND ');
export const anyOf = (...clauses: string[]): string => clauses.map((clause) => `(${clause})`).join(' OR ');
