import * as fc from 'fast-check';
import { type Change, type Fault, type FuzzTarget, fault, jsonObject, pick, weighted } from '#tests/support/fuzz-draft';
import { type FieldSite, fieldSites, locationName, preview, removeAt, setAt } from '#tests/support/fuzz-values';
import { bodySchemaOf, type SchemaJudge } from '#tests/support/openapi-schema';
import { deep } from '#tests/support/registry';

/**
 * The faults of a request body: text that is not JSON, JSON too deep or too large, no body where one is
 * required, and what the body schema of the document forbids (a value, a missing field, an unknown field
 * where the schema is closed).
 */

const SYNTAX_ERRORS: Array<[string, string, string?]> = [
  ['unterminated JSON', '{"name":"unterminated'],
  ['a form body', 'name=x&title=y', 'application/x-www-form-urlencoded'],
  [
    'a multipart body',
    '--b\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n--b--',
    'multipart/form-data; boundary=b',
  ],
  ['XML', '<task><title>x</title></task>', 'application/xml'],
  ['single quotes', "{'name': 'x'}"],
  ['a trailing comma', '{"name":"x",}'],
  ['trailing garbage', '{"name":"x"} garbage'],
  ['a raw NUL inside a string', '{"name":"a\u0000b"}'],
  ['NaN', 'NaN'],
];

// Made once: a long run sends thousands of them, and each would otherwise be a copy of its own.
const DEEP_BODIES = { 40: JSON.stringify(deep(40)), 3000: JSON.stringify(deep(3_000)) };
const DEEP_ARRAYS = `${'['.repeat(3_000)}${']'.repeat(3_000)}`;
const OVER_1_MIB = JSON.stringify({ name: 'x'.repeat(1_100_000) });

export function bodyFaults(target: FuzzTarget): Fault[] {
  const { def, judge, operation } = target;
  if (def.method === 'GET') return [];
  const text = (label: string, body: string, type?: string) =>
    fault(label, (draft) => {
      draft.body = { kind: 'text', text: body };
      if (type) draft.headers['content-type'] = type;
    });
  const deepField = fault('a field nested 40 deep', (draft) => {
    jsonObject(draft).metadata = deep(40);
  });
  const changes: Fault[] = [
    weighted(
      2,
      pick(SYNTAX_ERRORS).map(([label, body, type]) => text(`body is ${label}`, body, type)),
    ),
    weighted(
      2,
      fc.oneof(
        pick([40, 3_000] as const).map((levels) => text(`body nested ${levels} deep`, DEEP_BODIES[levels])),
        fc.constant(text('body nested 3,000 arrays deep', DEEP_ARRAYS)),
        fc.constant(deepField),
      ),
    ),
    weighted(1, fc.constant(text('body over 1 MiB', OVER_1_MIB))),
  ];
  if (operation.requestBody?.required) {
    const empty = pick(['no body', 'an empty body']).map((label) =>
      fault(label, (draft) => {
        draft.body = label === 'no body' ? { kind: 'none' } : { kind: 'text', text: '' };
      }),
    );
    changes.push(weighted(1, empty));
  }
  const schema = bodySchemaOf(operation);
  changes.push(weighted(2, outOfRange(schema ? fieldSitesOf(judge, schema) : [])));
  if (schema) changes.push(...schemaFaults(judge, schema));
  return changes;
}

/**
 * Numbers the document's conventions rule out (0 or a magnitude from 1e-130 to 2^53 − 1): as the value of
 * any field, inside a free-form object, or in a field of their own. They are written into the text, as
 * `JSON.stringify` would write Infinity as null.
 */
const OUT_OF_RANGE = ['1e400', '-1e400', '1e300', '9007199254740993', '-9007199254740993', '5e-324', '1e-131'];
const PLACEHOLDER = '\u0001number\u0001';

function outOfRange(sites: FieldSite[]): fc.Arbitrary<Change> {
  const inner = sites.filter((site) => site.location.length > 0);
  // Free-form objects take any number the document's schema allows: the ones the table must store as sent.
  const freeForm = inner.filter((site) => !site.schema.properties && site.schema.type === 'object');
  const places = fc.oneof(
    pick([['unexpected_number'], ...inner.map((site) => site.location)]),
    ...(freeForm.length > 0 ? [pick(freeForm.map((site) => [...site.location, 'n']))] : []),
  );
  return fc.tuple(pick(OUT_OF_RANGE), places).map(([literal, location]) =>
    fault(`${locationName('body', location)} = ${literal} (a number out of range)`, (draft) => {
      const holder = jsonObject(draft);
      setAt(holder, location, PLACEHOLDER);
      draft.body = { kind: 'text', text: JSON.stringify(holder).replace(JSON.stringify(PLACEHOLDER), literal) };
    }),
  );
}

const schemaFault = (label: string, change: Change): Change =>
  fault(label, (draft) => {
    change(draft);
    draft.bodyBreaksSchema = true;
  });

/** Faults a body schema of the document makes certain: forbidden values, missing fields, unknown ones. */
function schemaFaults(judge: SchemaJudge, schema: NonNullable<ReturnType<typeof bodySchemaOf>>) {
  const sites = fieldSitesOf(judge, schema);
  const changes: Fault[] = [];
  const withValue = sites.filter((site) => site.forbidden.length > 0);
  if (withValue.length > 0) {
    changes.push(
      weighted(
        10,
        pick(withValue).chain((site) =>
          fc.oneof(pick(site.forbidden), fc.jsonValue({ maxDepth: 2 })).map((candidate) => {
            const value = judge.forbids(site.schema, candidate) ? candidate : site.forbidden[0];
            return schemaFault(`${locationName('body', site.location)} = ${preview(value)}`, (draft) => {
              if (site.location.length === 0) draft.body = { kind: 'json', value };
              else setAt(jsonObject(draft), site.location, value);
            });
          }),
        ),
      ),
    );
  }
  const missing = sites.flatMap((site) => site.required.map((name) => ({ site, name })));
  if (missing.length > 0) {
    const remove = pick(missing).map(({ site, name }) =>
      schemaFault(`${locationName('body', [...site.location, name])} missing`, (draft) => {
        removeAt(jsonObject(draft), site.location, name);
      }),
    );
    changes.push(weighted(4, remove));
  }
  const closed = sites.filter((site) => site.schema.additionalProperties === false);
  if (closed.length > 0) {
    changes.push(
      weighted(
        3,
        fc.tuple(pick(closed), pick(['unexpected', '__proto__', 'org_id', 'role'])).map(([site, name]) =>
          schemaFault(`${locationName('body', [...site.location, name])} not allowed`, (draft) => {
            const holder = jsonObject(draft);
            setAt(holder, [...site.location, 'placeholder'], true);
            removeAt(holder, site.location, 'placeholder');
            let object: unknown = holder;
            for (const key of site.location) object = (object as Record<string | number, unknown>)[key];
            Object.defineProperty(object, name, { value: 'x', enumerable: true, configurable: true, writable: true });
          }),
        ),
      ),
    );
  }
  return changes;
}

const sitesCache = new WeakMap<object, FieldSite[]>();
function fieldSitesOf(judge: SchemaJudge, schema: object): FieldSite[] {
  let sites = sitesCache.get(schema);
  if (!sites) {
    sites = fieldSites(judge, schema);
    sitesCache.set(schema, sites);
  }
  return sites;
}
