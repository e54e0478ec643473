// The contract drift check: the SDK's param and response schemas, turned into JSON Schema
// with zod's z.toJSONSchema, against the sandbox's own openapi.json, route by route. The
// two sides are written independently (the sandbox never imports the SDK); this is where
// they must agree: every route and method, required fields, types and enum values.
//
// Rules. Params: the same fields, the same required set, the same types and enums, and the
// same bounds/patterns where both sides state one. Responses: every field the SDK reads is
// in the doc with a type the SDK accepts, the SDK requires only what the doc promises, and
// the enums the SDK knows are the doc's.
import * as z from 'zod/mini';
import { describe, expect, test } from 'vitest';
import * as sdk from '../../src/index.js';
import { KNOWN_VALUES } from '../../src/internal/fields.js';
import { openApiDocument } from '../../src/testing/mock-service/openapi.js';

type JSONSchema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, JSONSchema>;
  required?: string[];
  items?: JSONSchema;
  enum?: unknown[];
  anyOf?: JSONSchema[];
  oneOf?: JSONSchema[];
  $ref?: string;
};
type Route = {
  method: 'get' | 'post';
  path: string;
  body?: z.ZodMiniType;
  query?: z.ZodMiniType;
  /** The result as the SDK returns it (the `data` of an envelope, one item of a list). */
  response?: z.ZodMiniType;
  /** Where the result sits in the doc's 200 body. */
  at?: 'body' | 'data' | 'data[]';
};

// The route → schema table: one line per route the SDK calls.
const ROUTES: Route[] = [
  { method: 'post', path: '/api/v1/payments', body: sdk.PaymentCreateParams, response: sdk.Payment, at: 'data' },
  { method: 'get', path: '/api/v1/payments', query: sdk.PaymentListParams, response: sdk.PaymentListItem, at: 'data[]' },
  { method: 'get', path: '/api/v1/payments/{trx_id}', response: sdk.PaymentRecord, at: 'data' },
  { method: 'post', path: '/api/v1/payments/{trx_id}/push', body: sdk.PaymentPushParams, response: sdk.PaymentPushResult, at: 'data' },
  { method: 'get', path: '/api/v1/balance', response: sdk.BalanceResult, at: 'data' },
  { method: 'post', path: '/api/v1/initiate-payment', body: sdk.PaymentInitiateParams, response: sdk.PaymentSession, at: 'body' },
  { method: 'get', path: '/api/v1/verify-payment/{trxId}', response: sdk.VerifiedTransaction, at: 'body' },
  { method: 'get', path: '/api/v1/site-info', response: sdk.SiteInfo, at: 'body' },
  { method: 'post', path: '/api/v1/payouts/preview', body: sdk.PayoutPreviewParams, response: sdk.PayoutPreview, at: 'body' },
  { method: 'post', path: '/api/v1/payouts', body: sdk.PayoutCreateParams, response: sdk.Payout, at: 'data' },
  { method: 'get', path: '/api/v1/payouts', query: sdk.PayoutListParams, response: sdk.Payout, at: 'data[]' },
  { method: 'get', path: '/api/v1/payouts/{id}', response: sdk.Payout, at: 'data' },
  { method: 'post', path: '/api/v1/billing/plans', body: sdk.PlanCreateParams, response: sdk.Plan, at: 'data' },
  { method: 'post', path: '/api/v1/billing/subscriptions', body: sdk.SubscriptionCreateParams, response: sdk.Subscription, at: 'data' },
  { method: 'get', path: '/api/v1/billing/invoices', query: sdk.InvoiceListParams, response: sdk.Invoice, at: 'data[]' },
  { method: 'get', path: '/api/v1/openapi.json' },
];

const doc = openApiDocument('https://sandbox.test') as {
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; required?: boolean; schema: JSONSchema }>; requestBody?: { content: Record<string, { schema: JSONSchema }> }; responses: Record<string, { content?: Record<string, { schema: JSONSchema }> }> }>>;
  components: { schemas: Record<string, JSONSchema> };
};

/** `$ref`s replaced by what they point at, all the way down. */
function deref(schema: JSONSchema | undefined): JSONSchema | undefined {
  if (!schema) return schema;
  if (schema.$ref) return deref(doc.components.schemas[schema.$ref.split('/').pop()!]);
  const out: JSONSchema = { ...schema };
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, deref(v)!]));
  if (schema.items) out.items = deref(schema.items);
  for (const key of ['anyOf', 'oneOf'] as const) if (schema[key]) out[key] = schema[key].map((s) => deref(s)!);
  return out;
}

/** The SDK schema as JSON Schema, open enums carrying the values the SDK knows. */
function sdkSchema(schema: z.ZodMiniType, io: 'input' | 'output'): JSONSchema {
  const json = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    override: (ctx) => {
      const known = KNOWN_VALUES.get(ctx.zodSchema);
      if (known) ctx.jsonSchema.enum = [...known];
    },
  }) as JSONSchema;
  return unwrapOptional(json);
}

// `optional(x)` at the top (list params) comes out as anyOf [x, not-object]: keep x.
function unwrapOptional(schema: JSONSchema): JSONSchema {
  const parts = schema.anyOf ?? schema.oneOf;
  if (parts && !schema.type) {
    const objects = parts.filter((p) => p.type === 'object' || p.properties);
    if (objects.length === 1) return objects[0]!;
  }
  return schema;
}

/** The set of JSON types a schema admits ('integer' kept apart from 'number'). */
function types(schema: JSONSchema | undefined): string[] {
  if (!schema) return [];
  const parts = schema.anyOf ?? schema.oneOf;
  if (parts) return [...new Set(parts.flatMap(types))].sort();
  if (schema.const !== undefined) return [typeof schema.const];
  if (Array.isArray(schema.type)) return [...schema.type].sort();
  if (schema.type) return [schema.type];
  if (schema.enum) return [...new Set(schema.enum.map((v) => (v === null ? 'null' : typeof v)))].sort();
  return ['any'];
}

const sorted = (xs: unknown[] | undefined) => (xs ? [...xs].map(String).sort() : undefined);
const BOUNDS = ['pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const;

/** Params: both sides must describe the same input. */
function compareParams(where: string, mine: JSONSchema, theirs: JSONSchema, drifts: string[]): void {
  const a = mine.properties ?? {};
  const b = theirs.properties ?? {};
  for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (!(name in a)) drifts.push(`${where}.${name}: the doc has it, the SDK does not`);
    else if (!(name in b)) drifts.push(`${where}.${name}: the SDK sends it, the doc does not list it`);
    else compareParam(`${where}.${name}`, a[name]!, b[name]!, drifts);
  }
  const req = (s: JSONSchema) => sorted(s.required ?? []);
  if (JSON.stringify(req(mine)) !== JSON.stringify(req(theirs))) {
    drifts.push(`${where}: required SDK [${req(mine)}] vs doc [${req(theirs)}]`);
  }
}

function compareParam(where: string, mine: JSONSchema, theirs: JSONSchema, drifts: string[]): void {
  const [ta, tb] = [types(mine).filter((t) => t !== 'null'), types(theirs).filter((t) => t !== 'null')];
  if (JSON.stringify(ta) !== JSON.stringify(tb)) drifts.push(`${where}: type SDK ${ta} vs doc ${tb}`);
  if (JSON.stringify(sorted(mine.enum)) !== JSON.stringify(sorted(theirs.enum))) {
    drifts.push(`${where}: enum SDK [${sorted(mine.enum) ?? '-'}] vs doc [${sorted(theirs.enum) ?? '-'}]`);
  }
  for (const bound of BOUNDS) {
    if (mine[bound] !== undefined && theirs[bound] !== undefined && String(mine[bound]) !== String(theirs[bound])) {
      drifts.push(`${where}: ${bound} SDK ${String(mine[bound])} vs doc ${String(theirs[bound])}`);
    }
  }
}

/** Responses: what the SDK reads must be what the doc promises. */
function compareResult(where: string, mine: JSONSchema | undefined, theirs: JSONSchema | undefined, drifts: string[]): void {
  if (!mine || !theirs) return void drifts.push(`${where}: missing on the ${mine ? 'doc' : 'SDK'} side`);
  const docTypes = types(theirs);
  const sdkTypes = types(mine);
  // The SDK must accept every type the doc allows (it may accept more: it is open).
  const accepts = (t: string) => sdkTypes.includes(t) || sdkTypes.includes('any') || (t === 'integer' && sdkTypes.includes('number'));
  const missing = docTypes.filter((t) => t !== 'any' && !accepts(t));
  if (missing.length) drifts.push(`${where}: the doc allows ${missing}, the SDK only ${sdkTypes}`);
  if (mine.enum && theirs.enum && JSON.stringify(sorted(mine.enum.filter((v) => v !== null))) !== JSON.stringify(sorted(theirs.enum.filter((v) => v !== null)))) {
    drifts.push(`${where}: values SDK [${sorted(mine.enum)}] vs doc [${sorted(theirs.enum)}]`);
  } else if (mine.enum && !theirs.enum) {
    drifts.push(`${where}: the SDK knows values [${sorted(mine.enum)}], the doc lists none`);
  }
  const object = (s: JSONSchema) => s.properties ? s : (s.anyOf ?? s.oneOf)?.find((p) => p.properties);
  const [a, b] = [object(mine), object(theirs)];
  if (a?.properties) {
    if (!b?.properties) return void drifts.push(`${where}: the SDK reads fields [${Object.keys(a.properties)}], the doc shows none`);
    for (const [name, field] of Object.entries(a.properties)) {
      if (!(name in b.properties)) drifts.push(`${where}.${name}: the SDK reads it, the doc does not have it`);
      else compareResult(`${where}.${name}`, field, b.properties[name], drifts);
    }
    const extra = (a.required ?? []).filter((name) => !(b.required ?? []).includes(name));
    if (extra.length) drifts.push(`${where}: the SDK requires [${extra}], the doc does not promise them`);
  }
  const items = (s: JSONSchema) => s.items ?? (s.anyOf ?? s.oneOf)?.find((p) => p.items)?.items;
  if (items(mine)) compareResult(`${where}[]`, items(mine), items(theirs) ?? undefined, drifts);
}

/** The doc's 200 body at `at`. */
function docResult(route: Route): JSONSchema | undefined {
  const body = deref(doc.paths[route.path]?.[route.method]?.responses['200']?.content?.['application/json']?.schema);
  if (!body || route.at === 'body') return body;
  const data = body.properties?.data;
  return route.at === 'data[]' ? data?.items : data;
}

describe('the SDK and the sandbox describe the same API (openapi.json)', () => {
  test('every route and method is on both sides', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)).sort();
    expect(ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort()).toEqual(documented);
  });

  test.each(ROUTES.filter((r) => r.body))('$method $path: the request body', (route) => {
    const drifts: string[] = [];
    const theirs = deref(doc.paths[route.path]![route.method]!.requestBody?.content['application/json']?.schema);
    if (!theirs) drifts.push('the doc has no request body');
    else compareParams(`${route.path} body`, sdkSchema(route.body!, 'input'), theirs, drifts);
    expect(drifts).toEqual([]);
  });

  test.each(ROUTES.filter((r) => r.query))('$method $path: the query', (route) => {
    const drifts: string[] = [];
    const params = doc.paths[route.path]![route.method]!.parameters?.filter((p) => p.in === 'query') ?? [];
    const theirs: JSONSchema = {
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
      required: params.filter((p) => p.required).map((p) => p.name),
    };
    compareParams(`${route.path} query`, sdkSchema(route.query!, 'input'), theirs, drifts);
    expect(drifts).toEqual([]);
  });

  test.each(ROUTES.filter((r) => r.response))('$method $path: the result', (route) => {
    const drifts: string[] = [];
    compareResult(`${route.path} → ${route.at}`, sdkSchema(route.response!, 'output'), docResult(route), drifts);
    expect(drifts).toEqual([]);
  });

  test('the checker itself finds drift (a changed enum, a dropped field, a new requirement)', () => {
    const drifts: string[] = [];
    const theirs: JSONSchema = { type: 'object', required: ['a'], properties: { a: { type: 'string', enum: ['x', 'y'] }, b: { type: 'number' } } };
    compareParams('t', { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string', enum: ['x'] } } }, theirs, drifts);
    compareResult('r', { type: 'object', required: ['c'], properties: { c: { type: 'string' } } }, theirs, drifts);
    expect(drifts).toEqual([
      't.a: enum SDK [x] vs doc [x,y]',
      't.b: the doc has it, the SDK does not',
      't: required SDK [a,b] vs doc [a]',
      'r.c: the SDK reads it, the doc does not have it',
      'r: the SDK requires [c], the doc does not promise them',
    ]);
  });
});
