import * as fc from 'fast-check';
import type { RouteDef } from '#lib/http/route';
import type { FuzzCaller } from '#tests/support/fuzz-fixtures';
import type { Operation, SchemaJudge } from '#tests/support/openapi-schema';

/**
 * The shapes the fuzzing suite builds its requests in: a route and caller to fuzz, a draft request that
 * faults and extras change in turn, and the finished case with what was done to it.
 */

export type CallerKind = 'anonymous' | 'authenticated';

export interface FuzzTarget {
  def: RouteDef;
  operation: Operation;
  judge: SchemaJudge;
  kind: CallerKind;
  caller: FuzzCaller;
  /** An organization the caller is not a member of. */
  foreignOrgId: string;
  /** Path parameters (by path prefix) that name something other than a record, so any value is valid. */
  namesNotRecords: ReadonlySet<string>;
}

export interface FuzzRequest {
  path: string;
  query?: Record<string, string>;
  headers: Record<string, string>;
  body?: string;
  sourceIp: string;
}

export interface FuzzCase {
  request: FuzzRequest;
  /** The faults that make this request one the document forbids. */
  faults: string[];
  /** What else was done to it. */
  extras: string[];
  /** Whether the request presents a credential or signature that holds, so that a 401 would be wrong. */
  credentialHolds: boolean;
}

export type Body = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'text'; text: string };

export interface Draft {
  params: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: Body;
  faults: string[];
  extras: string[];
  credentialHolds: boolean;
  /** Set by a fault of the body schema: the body sent must be one the schema forbids. */
  bodyBreaksSchema?: boolean;
}

export type Change = (draft: Draft) => void;

/**
 * A kind of fault and how often to pick it among a route's others: the faults the document's schemas
 * describe field by field come most often, the ones any route refuses alike (bad JSON, depth, size) less.
 */
export interface Fault {
  arbitrary: fc.Arbitrary<Change>;
  weight: number;
}
export const weighted = (weight: number, arbitrary: fc.Arbitrary<Change>): Fault => ({ arbitrary, weight });

export const fault =
  (label: string, change: Change): Change =>
  (draft) => {
    change(draft);
    draft.faults.push(label);
  };
export const extra =
  (label: string, change: Change): Change =>
  (draft) => {
    change(draft);
    draft.extras.push(label);
  };

export const pick = <T>(values: readonly T[]) => fc.constantFrom(...values);

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The draft's JSON body as an object, made one if it is not. */
export function jsonObject(draft: Draft): Record<string, unknown> {
  if (draft.body.kind !== 'json' || !isObject(draft.body.value)) draft.body = { kind: 'json', value: {} };
  return (draft.body as { value: Record<string, unknown> }).value;
}

export const bearer =
  (token: string): Change =>
  (draft) => {
    draft.headers.authorization = `Bearer ${token}`;
  };
