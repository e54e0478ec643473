// The checks a case makes, with no test runner: each throws a CheckFailed whose message says
// what was checked, what was expected and what came, which is what the report shows.

/** A check that did not hold (its message is the case's failure). */
export class CheckFailed extends Error {
  override name = 'CheckFailed';
}

/** A value as a failure message shows it: JSON, `undefined` spelled out, cut at 300 characters. */
export function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'number' || typeof value === 'bigint') return Object.is(value, -0) ? '-0' : String(value);
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  let text: string;
  try {
    text = JSON.stringify(value, (_, part: unknown) => (part === undefined ? '<undefined>' : part)) ?? `a ${typeof value}`;
  } catch {
    text = `a ${typeof value} that is not JSON`;
  }
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** Code-point order: the byte order of UTF-8, which the stores sort keys in. */
export const byCodePoints = (x: string, y: string) => {
  const [a, b] = [[...x], [...y]];
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]!.codePointAt(0)! - b[i]!.codePointAt(0)!;
  return a.length - b.length;
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/**
 * Deep equality: `strict` as vitest's toStrictEqual (a key holding `undefined` is not an absent
 * key, and prototypes must match), else as its toEqual (keys holding `undefined` are ignored).
 */
function same(a: unknown, b: unknown, strict: boolean): boolean {
  if (Object.is(a, b)) return true;
  if (!isObject(a) || !isObject(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b) && a.length !== b.length) return false;
  if (strict && Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const keys = (of: Record<string, unknown>) => Object.keys(of).filter((key) => strict || of[key] !== undefined);
  const [ours, theirs] = [keys(a), keys(b)];
  return ours.length === theirs.length && ours.every((key) => theirs.includes(key) && same(a[key], b[key], strict));
}

/** `actual` has every field of `expected`, matching (recursively; arrays whole), as toMatchObject. */
function matchesObject(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected))
    return Array.isArray(actual) && actual.length === expected.length && expected.every((item, i) => matchesObject(actual[i], item));
  if (!isObject(expected)) return Object.is(actual, expected);
  return isObject(actual) && Object.keys(expected).every((key) => matchesObject(actual[key], expected[key]));
}

/** Throws unless `condition` holds; `what` says what was expected. */
export function ok(condition: boolean, what: string): asserts condition {
  if (!condition) throw new CheckFailed(what);
}

/** Throws: the case cannot go on (`what` says why). */
export function fail(what: string): never {
  throw new CheckFailed(what);
}

/** Throws unless `actual` deep-equals `expected` (keys holding `undefined` ignored). */
export function equal(actual: unknown, expected: unknown, what: string): void {
  if (!same(actual, expected, false)) throw new CheckFailed(`${what}: expected ${show(expected)}, got ${show(actual)}`);
}

/** Throws unless `actual` deep-equals `expected` exactly (an `undefined` field is not an absent one). */
export function strictEqual(actual: unknown, expected: unknown, what: string): void {
  if (!same(actual, expected, true)) throw new CheckFailed(`${what}: expected exactly ${show(expected)}, got ${show(actual)}`);
}

/** Throws unless `actual` has every field of `expected`, matching. */
export function matches(actual: unknown, expected: object, what: string): void {
  if (!matchesObject(actual, expected)) throw new CheckFailed(`${what}: expected ${show(actual)} to match ${show(expected)}`);
}

/** Throws unless `promise` rejects. */
export async function rejects(promise: Promise<unknown>, what: string): Promise<void> {
  const outcome = await promise.then(
    (value) => ({ value }),
    () => undefined,
  );
  if (outcome) throw new CheckFailed(`${what}: expected a rejection, got ${show(outcome.value)}`);
}
