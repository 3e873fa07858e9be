/**
 * Key conventions of the single table. Each entity's own key file builds on these; handlers never
 * spell a key by hand.
 *
 * - tenant data lives under `T#<orgId>`;
 * - integer ids are zero-padded in sort keys so that lexical order is numeric order.
 */
export const ID_WIDTH = 12;

/** @example pad(42) // '000000000042' */
export const pad = (id: number): string => String(id).padStart(ID_WIDTH, '0');

/** @example tenantPk('o_1') // 'T#o_1' */
export const tenantPk = (orgId: string): string => `T#${orgId}`;

export interface TableKey {
  pk: string;
  sk: string;
}

/**
 * The upper end of the sort keys that begin with `prefix`: `sk BETWEEN :prefix AND :end` selects the
 * same items as `begins_with(sk, :prefix)` (no key holds U+10FFFF, the last code point, and strings
 * compare by their UTF-8 bytes). DynamoDB Local reads a `begins_with` range up to the end of the
 * partition, and past the range when reading backwards: in a partition of 140,000 items, 50 ms against
 * 4 ms for the bounded range. AWS answers both alike.
 *
 * @example
 * KeyConditionExpression: 'pk = :pk AND sk BETWEEN :prefix AND :end',
 * ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix, ':end': prefixEnd(prefix) },
 */
export const prefixEnd = (prefix: string): string => `${prefix}\u{10FFFF}`;
