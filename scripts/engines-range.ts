// Which Node releases scripts/engines-check.mjs runs, read from `engines.node`: the lowest
// release of every major line the range admits (each must run the whole package), and the
// release just below each floor of the range (each must fail, or the range is too narrow).
// It reads the range syntax engines fields use (`||`, `>=`, `>`, `<`, `<=`, `^`, `~`, exact
// and partial versions such as `22` or `22.x`); anything else (hyphen ranges, pre-releases)
// throws rather than guess.

/** A release as [major, minor, patch]. */
export type Version = readonly [number, number, number];

interface Comparator {
  op: '>=' | '<' | '=';
  version: Version;
}

/** What to run, each with why. */
export interface EnginesPlan {
  /** The lowest admitted release of each major line, oldest first: each must pass. */
  lowest: { version: string; why: string }[];
  /** The newest release below each floor of the range, not admitted: each must fail. */
  below: { version: string; why: string }[];
}

const VERSION = /^v?(\d+)\.(\d+)\.(\d+)$/;

/** Parses `x.y.z` (a leading `v` allowed); throws on anything else (pre-releases included). */
export function parseVersion(text: string): Version {
  const match = VERSION.exec(text.trim());
  if (!match) throw new Error(`not a release version: ${JSON.stringify(text)}`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** Orders two versions: negative, zero or positive. */
export function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

const format = (v: Version) => v.join('.');

// A version in a range may be partial (`22`, `22.1`, `22.x`, `*`): the parts given.
function partial(text: string): number[] {
  const parts = text.split('.');
  const given: number[] = [];
  for (const part of parts) {
    if (/^[xX*]$/.test(part)) break;
    if (!/^\d+$/.test(part)) throw new Error(`unsupported version ${JSON.stringify(text)} in engines range`);
    given.push(Number(part));
  }
  if (parts.length > 3 || (given.length < parts.length && !parts.slice(given.length).every((p) => /^[xX*]$/.test(p)))) {
    throw new Error(`unsupported version ${JSON.stringify(text)} in engines range`);
  }
  return given;
}

const fill = (given: number[]): Version => [given[0] ?? 0, given[1] ?? 0, given[2] ?? 0];
// The first version after everything `given` covers: 22 -> 23.0.0, 22.1 -> 22.2.0.
const after = (given: number[]): Version =>
  given.length === 1 ? [given[0]! + 1, 0, 0] : given.length === 2 ? [given[0]!, given[1]! + 1, 0] : [given[0]!, given[1]!, given[2]! + 1];

// One comparator token, as npm reads it: `^20.16.0` is >=20.16.0 <21.0.0, `>=22` is
// >=22.0.0, `22.x` is >=22.0.0 <23.0.0, and so on.
function comparators(token: string): Comparator[] {
  const match = /^(\^|~|>=|<=|>|<|=)?v?(.+)$/.exec(token);
  if (!match) throw new Error(`unsupported engines token ${JSON.stringify(token)}`);
  const op = match[1] ?? '=';
  const given = partial(match[2]!);
  const low = fill(given);
  // `*` (or `>=*`): any version; `<*` and `>*`: none.
  if (given.length === 0) return [{ op: op === '<' || op === '>' ? '<' : '>=', version: [0, 0, 0] }];
  const span = (upper: Version): Comparator[] => [
    { op: '>=', version: low },
    { op: '<', version: upper },
  ];
  switch (op) {
    case '^': {
      // Up to the next change of the first non-zero part given.
      const [major, minor] = low;
      if (major > 0 || given.length === 1) return span([major + 1, 0, 0]);
      if (minor > 0 || given.length === 2) return span([0, minor + 1, 0]);
      return span([0, 0, low[2] + 1]);
    }
    case '~':
      return span(given.length === 1 ? [low[0] + 1, 0, 0] : [low[0], low[1] + 1, 0]);
    case '=':
      return given.length === 3 ? [{ op: '=', version: low }] : span(after(given));
    case '>':
      return [{ op: '>=', version: after(given) }];
    case '<=':
      return [{ op: '<', version: after(given) }];
    default:
      return [{ op: op as '>=' | '<', version: low }];
  }
}

/** Parses a range into its `||` alternatives, each a list of comparators that must all hold. */
export function parseRange(range: string): Comparator[][] {
  // `>= 22` is `>=22`.
  const sets = range
    .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
    .split('||')
    .map((set) => set.trim().split(/\s+/).filter(Boolean).flatMap(comparators));
  if (!range.trim() || sets.some((set) => set.length === 0)) throw new Error(`empty alternative in engines range ${JSON.stringify(range)}`);
  return sets;
}

function holds({ op, version }: Comparator, v: Version): boolean {
  const c = compare(v, version);
  return op === '>=' ? c >= 0 : op === '<' ? c < 0 : c === 0;
}

/** Whether `version` is in `range`. */
export function satisfies(version: string, range: string): boolean {
  const v = parseVersion(version);
  return parseRange(range).some((set) => set.every((c) => holds(c, v)));
}

/**
 * The releases to run for `range`, from the list of published releases (pre-releases and
 * anything unparsable are ignored): the lowest admitted one of each major line, and the
 * newest one below each alternative's floor that the range does not admit.
 */
export function planVersions(range: string, published: readonly string[]): EnginesPlan {
  const sets = parseRange(range);
  const releases = published
    .filter((text) => VERSION.test(text))
    .map(parseVersion)
    .sort(compare);
  const admitted = (v: Version) => sets.some((set) => set.every((c) => holds(c, v)));

  const lowest = new Map<number, Version>();
  for (const v of releases) if (admitted(v) && !lowest.has(v[0])) lowest.set(v[0], v);
  if (!lowest.size) throw new Error(`no published Node release satisfies ${JSON.stringify(range)}`);

  const below = new Map<string, { version: string; why: string }>();
  for (const set of sets) {
    const floor = releases.find((v) => set.every((c) => holds(c, v)));
    if (!floor) continue;
    const under = releases.filter((v) => compare(v, floor) < 0 && !admitted(v)).at(-1);
    if (under) below.set(format(under), { version: format(under), why: `just below ${format(floor)}` });
  }
  return {
    lowest: [...lowest.values()].map((v) => ({ version: format(v), why: `lowest ${v[0]}.x admitted` })),
    below: [...below.values()].sort((a, b) => compare(parseVersion(a.version), parseVersion(b.version))),
  };
}
