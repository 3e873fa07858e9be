/** The ledger's entry types, shared by the domain module and the route schemas (which stay free of I/O). */
export const LEDGER_TYPES = ['consume', 'purchase', 'bonus', 'signup_bonus', 'admin_grant', 'refund'] as const;
export type LedgerType = (typeof LEDGER_TYPES)[number];
