/**
 * How many answers the response contract checked in this test file (tests/support/contract.ts), kept
 * apart from the contract itself so that the per-file setup can report it without building the document.
 */
export const tally = { contractChecks: 0 };
