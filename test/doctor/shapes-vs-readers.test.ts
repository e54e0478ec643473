// Doctor's contract shapes (src/doctor/shapes.ts) and the client's resource readers (the
// `result` schemas of src/resources/routes.ts) describe the same results twice: doctor checks
// a server against the first, the merchant gets what the second reads. This holds them to
// each other on the fields a merchant acts on: a body built from the doctor shape, read
// through the route's reader, must give every such field with the value and type the shape
// says; and the reader may require no field the shape does not promise.
import { describe, expect, test } from 'vitest';
import * as z from 'zod/mini';
import { CONTRACT_ROUTES, type JSONSchema } from '../../src/doctor/contract.js';
import * as SHAPES from '../../src/doctor/shapes.js';
import { jsonHint } from '../../src/internal/fields.js';
import { CLIENT_ROUTES, type RouteName } from '../../src/resources/routes.js';

type At = 'body' | 'data' | 'data[]';

/** One route as both sides describe it. */
interface Pair {
  shape: z.ZodMiniType;
  at: At;
  reader: z.ZodMiniType;
}

// The fields a merchant acts on, per route, each with why (dotted paths; a list's item is its first).
const ACTED: Partial<Record<RouteName, Record<string, string>>> = {
  'payments.create': {
    trx_id: 'the key to verify, retrieve and push the payment',
    status: 'pending or already settled',
    amount: 'compared with the order',
    currency: 'compared with the order',
    checkout_url: 'where the customer is sent to pay',
    merchant_ref: 'ties the payment to its order',
  },
  'payments.initiate': { payment_url: 'where the customer is sent to pay (the earlier generation has no trx_id here)' },
  'payments.verify': {
    trx_id: 'the payment the outcome is of',
    status: 'fulfil on success, never otherwise',
    amount: "paidAmount's input: compared with the order's price",
    currency: "compared with the order's currency",
    fee: "paidAmount's input (the earlier generation's amount is the net)",
    net_amount: "paidAmount's input (the earlier generation's amount is the net)",
  },
  'payments.list': {
    trx_id: 'reconcile verifies each payment by it',
    status: 'what a merchant filters and acts on',
    amount: 'compared with the order',
    currency: 'compared with the order',
    merchant_ref: "reconcile's order reference (attempts, order_ref)",
    created_at: "reconcile's window (since … olderThan)",
  },
  'payments.retrieve': {
    trx_id: 'the payment looked up',
    status: 'pending or settled',
    amount: 'compared with the order',
    currency: 'compared with the order',
    checkout_url: 'a pending payment sent to its checkout again',
    failure_reason: 'waitForOutcome adds it to a failed outcome',
  },
  'payments.push': { trx_id: 'the payment that rang', status: 'pending or settled' },
  'balance.retrieve': { currency: 'which wallet', balance: 'what can be paid out' },
  'payouts.preview': {
    amount: 'the amount asked for',
    fee: 'shown to the payer before paying out',
    payable_amount: 'what the payee receives',
    currency: 'of the amounts',
  },
  'payouts.create': {
    id: 'looked up before paying out again',
    status: 'settled (SUCCESS, FAILED) or not (INPROGRESS, AMBIGUOUS)',
    amount: 'what was paid out',
    fee: 'what it cost',
    payable_amount: 'what the payee receives',
    currency: 'of the amounts',
  },
  'payouts.list': {
    id: 'finds a payout before paying out again',
    status: 'settled or not',
    amount: 'matched with the payout meant',
    currency: 'of the amount',
  },
  'payouts.retrieve': {
    id: 'the payout looked up',
    status: 'settled or not',
    amount: 'what was paid out',
    fee: 'what it cost',
    payable_amount: 'what the payee receives',
    currency: 'of the amounts',
  },
  'billing.plans.create': {
    plan_code: 'what a subscription is created with',
    amount: 'what each period costs',
    currency: 'of the amount',
    interval: 'how often it is charged',
  },
  'billing.subscriptions.create': {
    id: 'the subscription its webhooks and invoices name',
    plan_code: 'the plan subscribed to',
    status: 'pending until the customer accepts',
  },
  'billing.invoices.list': {
    id: 'the invoice',
    subscription: 'the subscription it bills',
    status: 'paid or not',
    amount: 'what was charged',
    currency: 'of the amount',
  },
};
// Routes with a doctor shape and nothing a merchant acts on, and why.
const NOTHING_ACTED: Partial<Record<RouteName, string>> = {
  'siteInfo.retrieve': 'shown to people (names, logo, links); a connectivity probe for doctor',
};
// Where the reader requires more than the shape can say: only with the status given.
const READER_ALSO_REQUIRES: Partial<Record<RouteName, { when: Record<string, string>; fields: string[] }>> = {
  // The earlier generation sends neither while pending or failed (docs/spec-gaps.md).
  'payments.verify': { when: { status: 'success' }, fields: ['amount', 'currency'] },
};

/** The shape as JSON Schema (the known values of open enums included), as the contract check sees it. */
function jsonOf(shape: z.ZodMiniType): JSONSchema {
  return z.toJSONSchema(shape, {
    io: 'output',
    unrepresentable: 'any',
    override: (ctx) => void Object.assign(ctx.jsonSchema, jsonHint(ctx.zodSchema) ?? {}),
  }) as JSONSchema;
}

/** The schema without its `null` branch. */
function nonNull(schema: JSONSchema): JSONSchema {
  const parts = (schema.anyOf ?? schema.oneOf)?.filter((part) => part.type !== 'null');
  return parts?.length === 1 ? nonNull(parts[0]!) : schema;
}

/** The JSON type a value of this (non-null) schema has: string, number, integer, boolean, object, array. */
const typeOf = (schema: JSONSchema): string | undefined => {
  const type = nonNull(schema).type;
  return Array.isArray(type) ? type.find((t) => t !== 'null') : type;
};

const SIMPLE = new Set(['string', 'number', 'integer', 'boolean']);

/**
 * An example value of a field: a known enum value (`success` where there is one), else a
 * value of the field's type that no other field has (so a reader that swaps two fields shows).
 */
function sample(name: string, schema: JSONSchema, n: number): unknown {
  const field = nonNull(schema);
  const values = (field.enum ?? []).filter((v): v is string => typeof v === 'string');
  if (values.length) return values.find((v) => v.toLowerCase() === 'success') ?? values[0];
  switch (typeOf(field)) {
    case 'number':
      return 100 + n + 0.25;
    case 'integer':
      return 100 + n;
    case 'boolean':
      return n % 2 === 0;
    default:
      if (name === 'currency' || name.endsWith('currency_code')) return 'TZS';
      if (name.endsWith('_url')) return `https://pay.example.com/${name}/${n}`;
      if (name.endsWith('_at')) return new Date(Date.UTC(2025, 0, 1, 0, n)).toISOString();
      return `${name}-${n}`;
  }
}

/**
 * An example of the shape: every field of a simple type, and the objects and lists that are
 * required or lead to an acted-on field. With `only: 'required'`, just what the shape requires.
 */
function example(schema: JSONSchema, acted: string[], only?: 'required', counter = { n: 0 }): unknown {
  const node = nonNull(schema);
  if (typeOf(node) === 'array' && node.items) return [example(node.items, acted, only, counter)];
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(node.properties ?? {})) {
    const required = node.required?.includes(name) ?? false;
    const below = acted.filter((path) => path.startsWith(`${name}.`)).map((path) => path.slice(name.length + 1));
    const type = typeOf(field);
    if (only && !required) continue;
    if (SIMPLE.has(type ?? '') || nonNull(field).enum) out[name] = sample(name, field, counter.n++);
    else if (required || below.length) out[name] = example(field, below, only, counter);
  }
  return out;
}

/** The server's body carrying `item` where the route's result sits. */
const bodyOf = (item: unknown, at: At): unknown => (at === 'data' ? { status: 'success', data: item } : item);

/** The value at a dotted path (a list's first item where a path meets a list). */
function get(value: unknown, path: string): unknown {
  let here = value;
  for (const key of path.split('.')) {
    if (Array.isArray(here)) here = here[0];
    here = (here as Record<string, unknown> | null | undefined)?.[key];
  }
  return here;
}

const jsType = (type: string | undefined) => (type === 'integer' ? 'number' : type);

/** The schema of the field at a dotted path, if the shape has one. */
function fieldSchema(schema: JSONSchema, path: string): JSONSchema | undefined {
  let here: JSONSchema | undefined = schema;
  for (const key of path.split('.')) {
    here = here && nonNull(here);
    if (here && typeOf(here) === 'array') here = here.items && nonNull(here.items);
    here = here?.properties?.[key];
  }
  return here;
}

/**
 * Where the doctor shape and the reader disagree on the route's acted-on fields, one line
 * each; empty when they agree.
 */
function disagreements({ shape, at, reader }: Pair, acted: string[]): string[] {
  const lines: string[] = [];
  const json = jsonOf(shape);
  for (const path of acted) if (!fieldSchema(json, path)) lines.push(`${path}: acted on, and the doctor shape has no such field`);
  if (lines.length) return lines;
  const item = example(json, acted);
  const byShape = shape.safeParse(item);
  if (!byShape.success) return [`the doctor shape refuses its own example: ${JSON.stringify(byShape.error.issues)}`];
  const read = reader.safeParse(bodyOf(item, at));
  if (!read.success) return [`the reader refuses a body of the doctor shape: ${JSON.stringify(read.error.issues)}`];
  for (const path of acted) {
    const [want, got] = [get(byShape.data, path), get(read.data, path)];
    const type = jsType(typeOf(fieldSchema(json, path)!));
    if (!Object.is(got, want) && JSON.stringify(got) !== JSON.stringify(want))
      lines.push(`${path}: the shape says ${JSON.stringify(want)}, the reader gives ${JSON.stringify(got)}`);
    else if (typeof got !== type) lines.push(`${path}: the shape's type is ${type}, the reader gives a ${typeof got}`);
  }
  // Every known value of an acted-on enum (a status) comes out as itself.
  for (const path of acted) {
    const values = nonNull(fieldSchema(json, path)!).enum ?? [];
    for (const value of values) {
      const changed = structuredClone(item) as Record<string, unknown>;
      setPath(changed, path, value);
      const out = reader.safeParse(bodyOf(changed, at));
      const got = out.success ? get(out.data, path) : `(refused: ${JSON.stringify(out.error.issues.map((i) => i.path.join('.')))})`;
      if (got !== value) lines.push(`${path}: the shape knows ${JSON.stringify(value)}, the reader gives ${JSON.stringify(got)}`);
    }
  }
  return lines;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let here: unknown = target;
  for (const key of keys.slice(0, -1)) {
    if (Array.isArray(here)) here = here[0];
    here = (here as Record<string, unknown>)[key];
  }
  if (Array.isArray(here)) here = here[0];
  (here as Record<string, unknown>)[keys.at(-1)!] = value;
}

/**
 * The reverse direction: the reader requires no field the shape does not promise. A body of
 * only what the shape requires (each known status in turn) must be read, and every field the
 * reader refuses to go without must be one the shape requires, and on the acted-on list.
 */
function readerRequiresMore({ shape, at, reader }: Pair, acted: string[], also?: { when: Record<string, string>; fields: string[] }) {
  const lines: string[] = [];
  const json = jsonOf(shape);
  const minimal = example(json, [], 'required') as Record<string, unknown>;
  const statuses = Array.isArray(minimal) ? [undefined] : [undefined, ...(nonNull(json.properties?.status ?? {}).enum ?? [])];
  for (const status of statuses) {
    const body = structuredClone(minimal);
    if (status !== undefined && 'status' in body) body.status = status;
    const extra = also && Object.entries(also.when).every(([key, value]) => body[key] === value) ? also.fields : [];
    const read = reader.safeParse(bodyOf(body, at));
    const refused = read.success ? [] : [...new Set(read.error.issues.map((issue) => issue.path.join('.')))];
    const beyond = refused.filter((field) => !extra.includes(field));
    if (beyond.length || (extra.length && !extra.every((field) => refused.includes(field))))
      lines.push(
        `with only the shape's required fields${status === undefined ? '' : ` (status ${String(status)})`}: the reader refuses [${refused}]`,
      );
  }
  const full = example(json, acted);
  if (!Array.isArray(full)) {
    for (const field of Object.keys(full as object)) {
      const { [field]: _gone, ...body } = full as Record<string, unknown>;
      if (reader.safeParse(bodyOf(body, at)).success) continue;
      if (!acted.includes(field)) lines.push(`${field}: the reader requires it, and it is not on the acted-on list`);
      if (!(json.required ?? []).includes(field) && !also?.fields.includes(field))
        lines.push(`${field}: the reader requires it, the doctor shape does not promise it`);
    }
  }
  return lines;
}

/** Every route both sides describe: the doctor shape and where it sits (contract.ts), and the client's reader. */
const PAIRS = Object.entries(CLIENT_ROUTES).flatMap(([name, client]) => {
  const contract = CONTRACT_ROUTES.find((r) => r.method === client.method.toLowerCase() && r.path === client.path);
  return contract?.response && contract.at
    ? [{ name: name as RouteName, pair: { shape: contract.response, at: contract.at, reader: client.result as z.ZodMiniType } }]
    : [];
});

describe("doctor's result shapes and the client's readers agree on what a merchant acts on", () => {
  test('every route with a doctor shape has its acted-on fields listed (or says why none)', () => {
    const described = PAIRS.map(({ name }) => name).sort();
    expect(described.length).toBeGreaterThan(10);
    expect([...Object.keys(ACTED), ...Object.keys(NOTHING_ACTED)].sort()).toEqual(described);
  });

  test.each(PAIRS.filter(({ name }) => ACTED[name]))(
    '$name: each acted-on field read with the value and type the shape says',
    ({ name, pair }) => {
      expect(disagreements(pair, Object.keys(ACTED[name]!))).toEqual([]);
    },
  );

  test.each(PAIRS)('$name: the reader requires nothing the shape does not promise', ({ name, pair }) => {
    expect(readerRequiresMore(pair, Object.keys(ACTED[name] ?? {}), READER_ALSO_REQUIRES[name])).toEqual([]);
  });

  test('verify: amount and currency required by the reader only once the payment succeeded', () => {
    const pair = PAIRS.find(({ name }) => name === 'payments.verify')!.pair;
    const pending = { status: 'pending', trx_id: 'TRX1' };
    expect(pair.reader.safeParse(pending).success).toBe(true);
    expect(pair.reader.safeParse({ ...pending, status: 'success' }).success).toBe(false);
    expect(pair.shape.safeParse({ ...pending, status: 'success' }).success).toBe(true);
  });

  test('the guard itself finds a renamed field, a changed type, a reader that reads another field, an extra requirement', () => {
    const create = PAIRS.find(({ name }) => name === 'payments.create')!.pair;
    const acted = Object.keys(ACTED['payments.create']!);
    // The shape renames checkout_url.
    const renamed = z.extend(z.omit(SHAPES.paymentShape, { checkout_url: true }), { checkout_link: z.optional(z.string()) });
    expect(disagreements({ ...create, shape: renamed }, acted)).toEqual(['checkout_url: acted on, and the doctor shape has no such field']);
    // The shape says amount is a string.
    const stringAmount = z.extend(SHAPES.paymentShape, { amount: z.string() });
    expect(disagreements({ ...create, shape: stringAmount }, acted)[0]).toMatch(/^the reader refuses a body of the doctor shape/);
    // The reader reads the currency from elsewhere, and drops the merchant's reference.
    const reader = z.pipe(
      create.reader,
      z.transform((p: Record<string, unknown>) => ({ ...p, currency: 'USD', merchant_ref: undefined })),
    );
    expect(disagreements({ ...create, reader }, acted)).toEqual([
      'currency: the shape says "TZS", the reader gives "USD"',
      'merchant_ref: the shape says "merchant_ref-1", the reader gives undefined',
    ]);
    // A payout reader that reads a status the shape knows as another.
    const payouts = PAIRS.find(({ name }) => name === 'payouts.retrieve')!.pair;
    const failing = z.pipe(
      payouts.reader,
      z.transform((p: Record<string, unknown>) => ({ ...p, status: p.status === 'AMBIGUOUS' ? 'INPROGRESS' : p.status })),
    );
    expect(disagreements({ ...payouts, reader: failing }, Object.keys(ACTED['payouts.retrieve']!))).toEqual([
      'status: the shape knows "AMBIGUOUS", the reader gives "INPROGRESS"',
    ]);
    // A reader that requires what the shape leaves optional.
    const strict = z.pipe(create.reader, z.looseObject({ expires_at: z.string() }));
    expect(readerRequiresMore({ ...create, reader: strict }, acted)).toEqual([
      "with only the shape's required fields: the reader refuses [expires_at]",
      ...['pending', 'success', 'failed'].map(
        (s) => `with only the shape's required fields (status ${s}): the reader refuses [expires_at]`,
      ),
      'expires_at: the reader requires it, and it is not on the acted-on list',
      'expires_at: the reader requires it, the doctor shape does not promise it',
    ]);
  });
});
