// The contract check: the SDK's param and response schemas, as JSON Schema (z.toJSONSchema),
// against an OpenAPI document of the service, route by route. Used by the drift test (the
// sandbox's document) and by `diagnose()` (the live service's). Not loaded by the client.
//
// Rules. Params: the same fields, the same required set, the same types and enums, and the
// same bounds/patterns where both sides state one. Responses: every field the SDK reads is
// in the document with a type the SDK accepts, the SDK requires only what the document
// promises, and the enums the SDK knows are the document's.
import * as z from 'zod/mini';
import { CLIENT_ROUTES, type ClientRoute, type RouteName } from '../resources/routes.js';
import { jsonHint } from '../internal/fields.js';
import * as SHAPES from './shapes.js';

export type JSONSchema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, JSONSchema>;
  required?: string[];
  items?: JSONSchema;
  enum?: unknown[];
  anyOf?: JSONSchema[];
  oneOf?: JSONSchema[];
  $ref?: string;
};
export type Route = {
  method: 'get' | 'post';
  path: string;
  body?: z.ZodMiniType;
  query?: z.ZodMiniType;
  /** The result as the SDK returns it (the `data` of an envelope, one item of a list). */
  response?: z.ZodMiniType;
  /** Where the result sits in the doc's 200 body. */
  at?: 'body' | 'data' | 'data[]';
  /** Parts the spec does not show: a difference there is advice (the SDK reads them defensively), never drift. */
  provisional?: ReadonlyArray<'body' | 'response'>;
};

// The sandbox's rules for the plan body, which the spec does not show. The SDK sends any
// plan body as written (its types only suggest these), so they live here, not in the client.
const PLAN_PARAMS_SANDBOX = z.looseObject({
  name: z.string().check(z.minLength(1), z.maxLength(100)),
  amount: z.number().check(z.minimum(1)),
  currency: z.optional(z.string().check(z.regex(/^[A-Z]{3}$/))),
  interval: z.optional(z.enum(['day', 'week', 'month', 'year'])),
  interval_count: z.optional(z.int().check(z.minimum(1), z.maximum(366))),
  plan_code: z.optional(z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/))),
  description: z.optional(z.string()),
});

type At = NonNullable<Route['at']>;
// What the check reads of each route's 200 body: the shape the SDK's reading is compared with
// (shapes.ts) and where the result sits. A route without a row is checked for its presence
// and its params only.
const RESULTS: Partial<Record<RouteName, readonly [shape: z.ZodMiniType, at: At]>> = {
  'payments.create': [SHAPES.paymentShape, 'data'],
  'payments.list': [SHAPES.paymentRecordShape, 'data[]'],
  'payments.retrieve': [SHAPES.paymentRecordShape, 'data'],
  'payments.push': [SHAPES.pushResultShape, 'data'],
  'payments.verify': [SHAPES.verifiedShape, 'body'],
  'payments.initiate': [SHAPES.paymentSessionShape, 'body'],
  'balance.retrieve': [z.array(SHAPES.walletShape), 'data'],
  'siteInfo.retrieve': [SHAPES.siteInfoShape, 'body'],
  'payouts.preview': [SHAPES.payoutPreviewShape, 'body'],
  'payouts.create': [SHAPES.payoutShape, 'data'],
  'payouts.list': [SHAPES.payoutShape, 'data[]'],
  'payouts.retrieve': [SHAPES.payoutShape, 'data'],
  'billing.plans.create': [SHAPES.planShape, 'data'],
  'billing.subscriptions.create': [SHAPES.subscriptionShape, 'data'],
  'billing.invoices.list': [SHAPES.invoiceShape, 'data[]'],
};
// Params the check reads instead of the client's schema: the plan body, sent as written (the
// spec does not show it, so it is a provisional part).
const PARAMS: Partial<Record<RouteName, z.ZodMiniType>> = { 'billing.plans.create': PLAN_PARAMS_SANDBOX };
// A result the spec does not show is read by fields.ts' provisional(), a bare transform that
// never refuses; a shown one is checked after its reading (a pipe) or is an object schema.
const isProvisional = (schema: z.ZodMiniType): boolean => schema._zod.def.type === 'transform';

/** The routes the SDK calls (the client's route table), with what the check compares of each. */
export const CONTRACT_ROUTES: Route[] = Object.entries(CLIENT_ROUTES).map(([name, client]: [string, ClientRoute]) => {
  const route: Route = { method: client.method === 'GET' ? 'get' : 'post', path: client.path };
  const params = PARAMS[name as RouteName] ?? client.params;
  if (params) route[client.method === 'GET' ? 'query' : 'body'] = params;
  const result = RESULTS[name as RouteName];
  if (result) [route.response, route.at] = result;
  const provisional: ('body' | 'response')[] = [];
  if (name in PARAMS) provisional.push('body');
  if (isProvisional(client.result)) provisional.push('response');
  if (provisional.length) route.provisional = provisional;
  return route;
});

/** The parts of an OpenAPI document the check reads. */
export type OpenAPIDoc = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: Array<{ name: string; in: string; required?: boolean; schema: JSONSchema }>;
        requestBody?: { content: Record<string, { schema: JSONSchema }> };
        responses: Record<string, { content?: Record<string, { schema: JSONSchema }> }>;
      }
    >
  >;
  components: { schemas: Record<string, JSONSchema> };
};

/** `$ref`s replaced by what they point at, all the way down. */
function deref(doc: OpenAPIDoc, schema: JSONSchema | undefined): JSONSchema | undefined {
  if (!schema) return schema;
  if (schema.$ref) return deref(doc, doc.components?.schemas?.[schema.$ref.split('/').pop()!]);
  const out: JSONSchema = { ...schema };
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, deref(doc, v)!]));
  if (schema.items) out.items = deref(doc, schema.items);
  for (const key of ['anyOf', 'oneOf'] as const) if (schema[key]) out[key] = schema[key].map((s) => deref(doc, s)!);
  return out;
}

/** The SDK schema as JSON Schema, open enums carrying the values the SDK knows. */
function sdkSchema(schema: z.ZodMiniType, io: 'input' | 'output'): JSONSchema {
  const json = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    override: (ctx) => {
      // Rules zod/mini's lighter forms cannot state themselves (formats, integers, enums).
      const hint = jsonHint(ctx.zodSchema);
      if (hint) Object.assign(ctx.jsonSchema, hint);
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
export function compareParams(where: string, mine: JSONSchema, theirs: JSONSchema, drifts: string[]): void {
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
    // Bounds are numbers or pattern strings: JSON text compares and prints either.
    const [a, b] = [JSON.stringify(mine[bound]), JSON.stringify(theirs[bound])];
    if (a !== undefined && b !== undefined && a !== b) drifts.push(`${where}: ${bound} SDK ${a} vs doc ${b}`);
  }
}

/** Responses: what the SDK reads must be what the doc promises. */
export function compareResult(where: string, mine: JSONSchema | undefined, theirs: JSONSchema | undefined, drifts: string[]): void {
  if (!mine || !theirs) return void drifts.push(`${where}: missing on the ${mine ? 'doc' : 'SDK'} side`);
  const docTypes = types(theirs);
  const sdkTypes = types(mine);
  // The SDK must accept every type the doc allows (it may accept more: it is open).
  const accepts = (t: string) => sdkTypes.includes(t) || sdkTypes.includes('any') || (t === 'integer' && sdkTypes.includes('number'));
  const missing = docTypes.filter((t) => t !== 'any' && !accepts(t));
  if (missing.length) drifts.push(`${where}: the doc allows ${missing}, the SDK only ${sdkTypes}`);
  if (
    mine.enum &&
    theirs.enum &&
    JSON.stringify(sorted(mine.enum.filter((v) => v !== null))) !== JSON.stringify(sorted(theirs.enum.filter((v) => v !== null)))
  ) {
    drifts.push(`${where}: values SDK [${sorted(mine.enum)}] vs doc [${sorted(theirs.enum)}]`);
  } else if (mine.enum && !theirs.enum) {
    drifts.push(`${where}: the SDK knows values [${sorted(mine.enum)}], the doc lists none`);
  }
  const object = (s: JSONSchema) => (s.properties ? s : (s.anyOf ?? s.oneOf)?.find((p) => p.properties));
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
function docResult(doc: OpenAPIDoc, route: Route): JSONSchema | undefined {
  const body = deref(doc, doc.paths[route.path]?.[route.method]?.responses['200']?.content?.['application/json']?.schema);
  if (!body || route.at === 'body') return body;
  const data = body.properties?.data;
  return route.at === 'data[]' ? data?.items : data;
}

/**
 * Every difference between the SDK's schemas and an OpenAPI document of the service where
 * the spec shows the shape, one line each (route, field, what each side says); empty when
 * they agree. A route the SDK calls and the document lacks is drift too.
 */
export function contractDrift(doc: OpenAPIDoc): string[] {
  return compareRoutes(doc, false);
}

/**
 * Where the document describes a shape the spec does not show (lists, payouts, balance,
 * billing…) otherwise than the SDK's guess (the sandbox's shape), one line each with the
 * field names. Advice, not failure: the SDK reads those shapes defensively.
 */
export function provisionalDifferences(doc: OpenAPIDoc): string[] {
  return compareRoutes(doc, true);
}

function compareRoutes(doc: OpenAPIDoc, provisional: boolean): string[] {
  const drifts: string[] = [];
  const documented = new Set(
    Object.entries(doc.paths ?? {}).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)),
  );
  for (const route of CONTRACT_ROUTES) {
    const name = `${route.method.toUpperCase()} ${route.path}`;
    if (!documented.has(name)) {
      if (!provisional) drifts.push(`${name}: the SDK calls it, the document does not have it`);
      continue;
    }
    // Each part is compared in the one list it belongs to: shown parts as drift, the rest as advice.
    const part = (which: 'body' | 'response') => (route.provisional?.includes(which) ?? false) === provisional;
    const operation = doc.paths[route.path]![route.method]!;
    if (route.body && part('body')) {
      const theirs = deref(doc, operation.requestBody?.content['application/json']?.schema);
      if (!theirs) drifts.push(`${name}: the document has no request body`);
      else compareParams(`${route.path} body`, sdkSchema(route.body, 'input'), theirs, drifts);
    }
    if (route.query && !provisional) {
      const params = operation.parameters?.filter((p) => p.in === 'query') ?? [];
      const theirs: JSONSchema = {
        type: 'object',
        properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
        required: params.filter((p) => p.required).map((p) => p.name),
      };
      compareParams(`${route.path} query`, sdkSchema(route.query, 'input'), theirs, drifts);
    }
    if (route.response && part('response')) {
      compareResult(`${route.path} → ${route.at}`, sdkSchema(route.response, 'output'), docResult(doc, route), drifts);
    }
  }
  return drifts;
}
