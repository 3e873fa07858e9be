import * as fc from 'fast-check';
import type { RouteDef } from '#lib/http/route';
import { Router } from '#lib/http/router';
import { allRoutes } from '#lib/routes/index';
import { bodyFaults } from '#tests/support/fuzz-bodies';
import { anonymousCredentials, credentialFaults, extras, unsignedCredentials } from '#tests/support/fuzz-callers';
import {
  bearer,
  type Change,
  type Draft,
  type Fault,
  type FuzzCase,
  type FuzzTarget,
  fault,
  pick,
  weighted,
} from '#tests/support/fuzz-draft';
import { signatureHeaders } from '#tests/support/fuzz-fixtures';
import {
  decodeSegment,
  encodeSegment,
  exampleOf,
  forbiddenTexts,
  PATH_SEGMENTS,
  preview,
} from '#tests/support/fuzz-values';
import { bodySchemaOf, parametersOf } from '#tests/support/openapi-schema';

export type { CallerKind, FuzzCase, FuzzTarget } from '#tests/support/fuzz-draft';

/**
 * Requests the OpenAPI document forbids, generated with fast-check for one route and one kind of caller.
 * Each case carries at least one fault the document makes certain (a value its schema forbids, a missing
 * required field or parameter, a body that is not JSON, too deep or too large, a path id that names no
 * record of the caller, a credential that does not hold), so the only right answer is a 4xx; on top of
 * it come extras that may or may not be faults (unknown fields, NUL and lone surrogates, 100 KB strings,
 * other content types, unknown query parameters, odd headers). Bodies: fuzz-bodies.ts; credentials and
 * extras: fuzz-callers.ts.
 */

const router = new Router(allRoutes.map((def) => ({ def })));
const paramNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
const prefixOf = (path: string, name: string) => path.slice(0, path.indexOf(`{${name}}`) + name.length + 2);
const pathOf = (def: RouteDef, params: Record<string, string>) =>
  `/api${def.path.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? '1')}`;

/** The arbitrary of forbidden requests for a route and caller, or undefined when the route takes no input. */
export function fuzzCases(target: FuzzTarget): fc.Arbitrary<FuzzCase> | undefined {
  const { def, kind } = target;
  const faults = [...pathFaults(target), ...queryFaults(target), ...bodyFaults(target)];
  const signed =
    def.auth === 'signature' && kind === 'authenticated' && !!signatureHeaders(def.path, target.caller.secrets, '');
  let credential: fc.Arbitrary<Change>;
  if (def.auth === 'bearer' && kind === 'authenticated') {
    credential = fc.constant(bearer(target.caller.user.token));
    faults.push(...credentialFaults(target));
  } else if (def.auth === 'bearer') {
    credential = anonymousCredentials();
  } else if (def.auth === 'signature' && !signed) {
    credential = unsignedCredentials(target);
  } else {
    credential = fc.constant(kind === 'authenticated' ? bearer(target.caller.user.token) : () => {});
  }
  const credentialIsFault = def.auth !== 'none' && !(def.auth === 'bearer' && kind === 'authenticated') && !signed;
  if (faults.length === 0 && !credentialIsFault) return undefined;
  const anyFault = faults.length > 0 ? fc.oneof(...faults) : fc.constant<Change>(() => {});
  const primary = credentialIsFault ? fc.option(anyFault) : anyFault;
  return fc
    .record({
      params: paramValues(target),
      credential,
      extras: fc.array(fc.oneof(...extras(target)), { maxLength: 3 }),
      primary,
      sourceIp: fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `198.18.${a}.${b}`),
    })
    .map(({ params, credential, extras, primary, sourceIp }) => {
      const draft: Draft = {
        params: { ...params },
        query: requiredQuery(target),
        headers: { 'content-type': 'application/json' },
        body: def.method === 'GET' ? { kind: 'none' } : { kind: 'json', value: baseBody(target) },
        faults: [],
        extras: [],
        credentialHolds: (def.auth === 'bearer' && kind === 'authenticated') || signed,
      };
      credential(draft);
      for (const change of extras) change(draft);
      primary?.(draft);
      return finish(target, draft, signed, sourceIp);
    });
}

function finish(target: FuzzTarget, draft: Draft, signed: boolean, sourceIp: string): FuzzCase {
  if (draft.bodyBreaksSchema) {
    const value = draft.body.kind === 'json' ? draft.body.value : undefined;
    if (!target.judge.forbids(bodySchemaOf(target.operation), value)) {
      throw new Error(`the fuzzer built a body its schema allows: ${draft.faults.join('; ')}: ${preview(value)}`);
    }
  }
  const path = pathOf(target.def, draft.params);
  const body =
    draft.body.kind === 'json'
      ? JSON.stringify(draft.body.value)
      : draft.body.kind === 'text'
        ? draft.body.text
        : undefined;
  if (signed) {
    Object.assign(draft.headers, signatureHeaders(target.def.path, target.caller.secrets, body ?? ''));
    draft.query.org = target.caller.user.orgId;
    draft.extras.push('signed with the organization’s secret');
  }
  const query = Object.keys(draft.query).length > 0;
  return {
    request: {
      path,
      headers: draft.headers,
      sourceIp,
      ...(query ? { query: draft.query } : {}),
      ...(body !== undefined ? { body } : {}),
    },
    faults: draft.faults,
    extras: draft.extras,
    credentialHolds: draft.credentialHolds,
  };
}

/** Required query parameters with values the document allows, so that a fault elsewhere is the only one. */
function requiredQuery(target: FuzzTarget): Record<string, string> {
  const required = parametersOf(target.operation, 'query').filter((parameter) => parameter.required);
  return Object.fromEntries(
    required.map((parameter) => [parameter.name, String(exampleOf(target.judge, parameter.schema) ?? 'fuzz')]),
  );
}

function baseBody(target: FuzzTarget): unknown {
  const schema = bodySchemaOf(target.operation);
  return schema ? structuredClone(exampleOf(target.judge, schema) ?? {}) : undefined;
}

/** Path values: the caller's real record where there is one (sometimes), else a segment naming nothing. */
function paramValues(target: FuzzTarget): fc.Arbitrary<Record<string, string>> {
  const entries = paramNames(target.def.path).map((name) => {
    const real = target.caller.realIds.get(prefixOf(target.def.path, name));
    const hostile = pick(PATH_SEGMENTS).filter((raw) => routesTo(target.def, name, raw));
    return [
      name,
      real ? fc.oneof({ arbitrary: fc.constant(encodeSegment(real)), weight: 3 }, hostile) : hostile,
    ] as const;
  });
  return fc.record(Object.fromEntries(entries));
}

/** Whether a path with this segment still reaches the route (and not a sibling such as `/users/me`). */
function routesTo(def: RouteDef, name: string, raw: string): boolean {
  try {
    const match = router.match(def.method, pathOf(def, { [name]: raw }));
    return match.kind === 'found' && match.route.def === def;
  } catch {
    // A segment that cannot be decoded is refused while routing, by whichever function receives it.
    return decodeSegment(raw) === undefined;
  }
}

function pathFaults(target: FuzzTarget): Fault[] {
  const { def, judge } = target;
  const own = new Set(target.caller.realIds.values());
  const schemas = new Map(
    parametersOf(target.operation, 'path').map((parameter) => [parameter.name, parameter.schema]),
  );
  return paramNames(def.path).flatMap((name) => {
    const isRecord = !target.namesNotRecords.has(prefixOf(def.path, name));
    const names = (raw: string) => {
      const decoded = decodeSegment(raw);
      if (decoded === undefined) return 'cannot be decoded';
      if (judge.forbidsText(schemas.get(name), decoded)) return 'forbidden by its schema';
      return isRecord && !own.has(decoded) ? 'names no record of the caller' : undefined;
    };
    const random = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(encodeSegment);
    const candidates = [...PATH_SEGMENTS, target.foreignOrgId];
    const fixed = candidates.filter((raw) => names(raw) && routesTo(def, name, raw));
    if (fixed.length === 0) return [];
    const value = fc.oneof(
      pick(fixed),
      random.map((raw) => (names(raw) && routesTo(def, name, raw) ? raw : (fixed[0] as string))),
    );
    return [
      weighted(
        3,
        value.map((raw) =>
          fault(`path ${name} = ${preview(raw)} (${names(raw)})`, (draft) => {
            draft.params[name] = raw;
          }),
        ),
      ),
    ];
  });
}

function queryFaults(target: FuzzTarget): Fault[] {
  return parametersOf(target.operation, 'query').flatMap((parameter) => {
    const changes: Fault[] = [];
    if (parameter.required) {
      const missing = fault(`query ${parameter.name} missing`, (draft) => delete draft.query[parameter.name]);
      changes.push(weighted(1, fc.constant(missing)));
    }
    const fixed = forbiddenTexts(target.judge, parameter.schema);
    if (fixed.length > 0) {
      const random = fc.string({ unit: 'binary', maxLength: 30 });
      const forbidden = (text: string) => target.judge.forbidsText(parameter.schema, text);
      const value = fc.oneof(
        pick(fixed),
        random.map((text) => (forbidden(text) ? text : (fixed[0] as string))),
      );
      changes.push(
        weighted(
          2,
          value.map((text) =>
            fault(`query ${parameter.name} = ${preview(text)}`, (draft) => {
              draft.query[parameter.name] = text;
            }),
          ),
        ),
      );
    }
    return changes;
  });
}
