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
