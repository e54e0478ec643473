// Field rules shared by several routes, each written once from the spec's tables. zod/mini:
// only the checks used are bundled (the classic API carries every method on every schema).
import * as z from 'zod/mini';
import { isRecord } from './envelope.js';
import { decimalValue, exactAmount } from '../core/money.js';
import { checkPhone, type PhoneCountry } from '../core/phone.js';

/** A runtime schema of `T` (zod/mini): `.parse(value)` returns a `T` or throws. */
export type Schema<T> = z.ZodMiniType<T, unknown>;

// Size: zod/mini's string formats, z.int, z.enum and z.union each bring their own classes
// (about 2 kB gzipped together). The same rules as a refine on a plain string or number cost
// nothing extra (refine is bundled anyway); what JSON Schema they stand for rides on the
// schema as a hint (a global symbol) that the contract check reads.
const HINT = Symbol.for('business-payments.json-schema');

/** `schema` with the JSON Schema it stands for (merged over what z.toJSONSchema makes of it). */
function hinted<S extends object>(schema: S, json: Record<string, unknown>): S {
  return Object.assign(schema, { [HINT]: json });
}

/** @internal What a schema stands for in JSON Schema beyond what zod says, if anything. */
export function jsonHint(schema: object): Record<string, unknown> | undefined {
  return (schema as { [HINT]?: Record<string, unknown> })[HINT];
}

/**
 * A value of `T` checked by `test`, with `message` (or what it says of the value) when it fails
 * (any type; `undefined` is required).
 */
export const custom = <T>(
  test: (value: unknown) => boolean,
  message: string | ((value: unknown) => string),
  json: Record<string, unknown>,
): z.ZodMiniType<T, T> =>
  // abort: false, as for a type error, so object-level rules (push needs a phone) still run.
  hinted(
    z.custom<T>(test, {
      abort: false,
      error: (issue) => (issue.input === undefined ? 'is required' : typeof message === 'string' ? message : message(issue.input)),
    }),
    json,
  );

const isHttpUrl = (value: unknown): boolean => {
  try {
    return typeof value === 'string' && /^https?:$/.test(new URL(value).protocol);
  } catch {
    return false;
  }
};

/** An absolute http(s) URL (webhook targets, redirects). */
export const httpUrl = custom<string>(isHttpUrl, 'must be an absolute http:// or https:// URL', { type: 'string', format: 'uri' });

/** An e-mail address of at most 100 characters. */
export const email = custom<string>(
  (value) => typeof value === 'string' && value.length <= 100 && /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(value),
  'must be a valid e-mail address of at most 100 characters',
  { type: 'string', format: 'email', maxLength: 100 },
);

/** A UUID (any version), e.g. 123e4567-e89b-12d3-a456-426614174000. */
export const uuid = custom<string>(
  (value) => typeof value === 'string' && /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i.test(value),
  'must be a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000',
  { type: 'string', format: 'uuid' },
);

/** A whole number from `min` (to `max`, when given). */
const int = (min: number, max: number | undefined, message: string): z.ZodMiniType<number, number> =>
  custom<number>((value) => isCount(value, min, max), message, {
    type: 'integer',
    minimum: min,
    ...(max !== undefined && { maximum: max }),
  });

/** One of `values` (a param: the SDK refuses any other before sending). */
export const oneOf = <const T extends readonly string[]>(values: T, message: string): z.ZodMiniType<T[number], T[number]> =>
  custom<T[number]>((value) => values.includes(value as string), message, { type: 'string', enum: [...values] });

/** A string that matches `pattern` (its JSON Schema `pattern` rides as a hint), else `message`. */
export const matching = (pattern: RegExp, message: string) =>
  hinted(z.string().check(z.refine((value) => pattern.test(value), message)), { pattern: pattern.source });

/** 3-letter upper-case ISO 4217 code. */
export const currencyCode = matching(/^[A-Z]{3}$/, 'must be a 3-letter upper-case currency code such as USD');

// The country of local phone numbers (`0712 345 678`) while a call's params are parsed: the
// client's `phoneCountry`, set by the pipeline around its (synchronous) parse; TZ otherwise,
// the spec's "Tanzanian mobile number".
let phoneCountry: PhoneCountry = 'TZ';

/** @internal `parse()` with `country` as the country of local phone numbers (the parse is synchronous). */
export function inPhoneCountry<T>(country: PhoneCountry, parse: () => T): T {
  const before = phoneCountry;
  phoneCountry = country;
  try {
    return parse();
  } finally {
    phoneCountry = before;
  }
}

/**
 * When an object-level rule runs: on any params object, even one with a field of the wrong
 * type (zod skips refinements after a type error otherwise), so every failing field is listed
 * at once. The rules read and rewrite only their own keys.
 */
export const whenObject = { when: (payload: { value: unknown }) => isRecord(payload.value) };

/**
 * A mobile number as people write it (`0712 345 678`, `+255 712-345-678`, `00255712345678`):
 * a mobile number of `country` (default: the client's `phoneCountry`), rewritten to its
 * international digits by {@link normalizedPhones}.
 */
export const phoneParam = (country?: PhoneCountry) =>
  custom<string>(
    (value) => 'phone' in checkPhone(value, country ?? phoneCountry),
    (value) => (checkPhone(value, country ?? phoneCountry) as { message: string }).message,
    { type: 'string' },
  );

/** The object rule that sends each phone field of `fields` as its international digits (`255712345678`). */
export const normalizedPhones = (fields: Record<string, PhoneCountry | undefined>) =>
  z.check<Record<string, unknown>>((payload) => {
    for (const field in fields) {
      const checked = checkPhone(payload.value[field], fields[field] ?? phoneCountry);
      if ('phone' in checked) payload.value[field] = checked.phone;
    }
  }, whenObject);

/**
 * An amount param: a number or a decimal string (`'19.99'`, pg's `numeric`) that passes `test`
 * (else `message`), sent as the exact amount of its currency by {@link exactAmounts}.
 */
export const amountParam = (test: (amount: number) => boolean, message: string, json: Record<string, unknown>) =>
  custom<number | string>(
    (value) => decimalValue(value) !== undefined && test(decimalValue(value)!),
    (value) => (decimalValue(value) === undefined ? 'must be a number or a decimal string such as "19.99"' : message),
    { type: 'number', ...json },
  );

/**
 * The object rule that sends `field` as an exact amount of the currency in `currencyField` (2
 * digits without one: a payout): float noise removed (`1.1 + 2.2` → 3.3), a decimal string
 * read as its number, and more digits than the currency has refused with the two nearest
 * amounts.
 */
export const exactAmounts = (field: string, currencyField?: string) =>
  z.check<Record<string, unknown>>((payload) => {
    const value = payload.value[field];
    // A value that is no amount at all is the field's own rule's to report.
    if (decimalValue(value) === undefined) return;
    const exact = exactAmount(value, currencyField && payload.value[currencyField]);
    if ('amount' in exact) payload.value[field] = exact.amount;
    else payload.issues.push({ code: 'custom', path: [field], message: exact.error, input: value });
  }, whenObject);

/** A string with at most `max` characters, and at least one when `min` is 1. */
export const text = (max: number, min = 0) =>
  z.string().check(...(min ? [z.minLength(min, 'must not be empty')] : []), z.maxLength(max, `must be at most ${max} characters`));

/** A non-empty identifier used in a path. */
export const pathId = z.string().check(
  z.trim(),
  z.minLength(1, 'must be a non-empty string'),
  z.maxLength(200, 'must be at most 200 characters'),
  // The URL parser resolves `.`/`..` segments away (even as %2e), sending the call to another
  // route; a lone surrogate makes encodeURIComponent throw a bare URIError.
  z.refine((id) => id !== '.' && id !== '..', 'must not be "." or ".."'),
  z.refine((id) => !/\p{Cs}/u.test(id), 'must be well-formed Unicode (it has a lone surrogate)'),
);

/**
 * An enum closed for the compiler and open at run time: a value newer than this SDK (a new
 * status) passes through as it came instead of failing the call.
 */
export function openEnum<const T extends readonly string[]>(values: T): z.ZodMiniType<T[number]> {
  // The known values ride on the schema itself (a global symbol), so the contract check
  // finds them from any copy of this module, e.g. a separately built entry.
  return hinted(z.string(), { enum: [...values] });
}

/** A positive amount in currency units: a number or a decimal string (a payout's: 2 digits, see {@link exactAmounts}). */
export const positiveAmount = amountParam((amount) => amount > 0, 'must be greater than 0', { exclusiveMinimum: 0 });

/** Page size (1–100, the service's limit) and offset of list routes. */
export const pageParams = {
  limit: z.optional(int(1, 100, 'must be a whole number from 1 to 100 (the service refuses more)')),
  offset: z.optional(int(0, undefined, 'must be a whole number, 0 or more')),
};

// Read here and in core/ (pagination): they live in core/values.ts.
import { isCount, toFlag, toNumber } from '../core/values.js';
export { toNumber };

/**
 * A provisional result (the spec shows no shape): read by `read`, which never throws and
 * keeps every field the server sent. The sandbox's shape it is typed after lives in
 * doctor/shapes.ts, for the contract check only: it is never enforced.
 */
export const provisional = <T>(read: (body: unknown) => T): z.ZodMiniType<T, unknown> => z.transform(read);

/**
 * A shown result: read as tolerantly as a provisional one, then the fields the merchant
 * acts on (`acted`) checked, so only those can fail the call (a JSON object is required).
 * The full shape the spec gives is in doctor/shapes.ts, for the contract check.
 */
export const shown = <T>(acted: Record<string, z.ZodMiniType>, read: (body: unknown) => unknown): z.ZodMiniType<T, unknown> =>
  z.pipe(z.transform(read), z.looseObject(acted)) as unknown as z.ZodMiniType<T, unknown>;

/** How to read one kind of provisional record (see {@link readRecord}). */
export interface RecordReading {
  /** Canonical id fields and the other names a server may give them; read as strings. */
  ids?: Record<string, readonly string[]>;
  /** Other canonical fields and their other names (`amount` ← `price`). */
  aliases?: Record<string, readonly string[]>;
  /** Fields where a decimal string is read as its number. */
  numbers?: readonly string[];
  /** Boolean fields a server may send as 1/0 or their strings. */
  flags?: readonly string[];
}

/**
 * A provisional record as the server sent it, every field kept, and the canonical fields
 * the SDK's types name filled in from the other names a server may use for them.
 */
export function readRecord<T>(value: unknown, { ids = {}, aliases = {}, numbers = [], flags = [] }: RecordReading): T {
  if (!isRecord(value)) return value as T;
  const out: Record<string, unknown> = { ...value };
  const fill = (names: Record<string, readonly string[]>, map: (v: unknown) => unknown) => {
    for (const name in names) {
      const from = out[name] == null ? names[name]!.find((key) => out[key] != null) : name;
      if (from !== undefined) out[name] = map(out[from]);
    }
  };
  fill(ids, (id) => (typeof id === 'number' ? String(id) : id));
  fill(aliases, (v) => v);
  for (const key of numbers) if (key in out) out[key] = toNumber(out[key]);
  for (const key of flags) if (key in out) out[key] = toFlag(out[key]);
  return out as T;
}

/** An object schema that keeps fields it does not name (results are open at run time). */
export const open = z.looseObject;

/** Fields every stored record carries. */
export interface RecordTimes {
  /** `sandbox` or `production`. */
  environment?: 'sandbox' | 'production' | undefined;
  /** Creation time (ISO 8601). */
  created_at?: string | undefined;
  /** Last change (ISO 8601). */
  updated_at?: string | undefined;
}

/** Schema fields of {@link RecordTimes}. */
// Pure: only the contract check's shapes use it, and a client bundle drops it.
export const recordTimes = {
  environment: /* @__PURE__ */ z.optional(/* @__PURE__ */ openEnum(['sandbox', 'production'])),
  created_at: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  updated_at: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
};

/** Optional and nullable: a field the service may omit or send as null. */
export const maybe = z.nullish;

/** Optional: a param the caller may leave out (or pass as `undefined`). */
export const optional = z.optional;

// Compile-time tie between a schema and the interface it is exported with: the schema's
// output (index signatures of open objects removed) and the interface must be the same type.
type Closed<T> = T extends readonly (infer U)[]
  ? Closed<U>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: Closed<T[K]> }
    : T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** @internal `true` when schema `S` parses to exactly `T` (unknown fields aside). */
export type Ties<S extends z.ZodMiniType, T> = Same<Closed<z.output<S>>, Closed<T>>;
/** @internal `true` when schema `S` accepts exactly `T` as input. */
export type TiesInput<S extends z.ZodMiniType, T> = Same<Closed<z.input<S>>, Closed<T>>;
/** @internal Compiles only when `T` is `true`. */
export type Assert<T extends true> = T;
