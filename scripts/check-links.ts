// Checks every link and image in the Markdown files the package ships (the guides, the README,
// the changelog, examples/README.md and examples/nextjs/README.md), where users read them: in
// node_modules/business-payments/, which has dist/, docs/*.md, README.md, CHANGELOG.md and the
// runnable examples (examples/), but no test/, src/, scripts/ or docs/images/.
// The repository is not published: nothing exists under github.com/business-payments/, so a
// link there leads nowhere. The rule (CONTRIBUTING.md, "Links in the shipped docs"):
//   - a relative link names a file of the packed package, of any type (a guide, with an
//     optional #anchor, or an example's source: ../examples/fastify/server.ts): it resolves
//     in the installed package (and in a clone);
//   - a file that is not shipped (tests, scripts, images, an example left out of package.json
//     "files") is named as text, not linked: a relative link to it is a problem, and so is one
//     to a folder (link a file in it: examples/nextjs/README.md);
//   - a URL into the repository on GitHub (github.com/business-payments/…, or the same on
//     raw.githubusercontent.com) is a problem, in a link, an image, a bare URL, and even in a
//     code block (a command to copy);
//   - an #anchor names a heading of its target (GitHub's slugs) or an HTML id there;
//   - any other URL is only checked for syntax (nothing goes on the network); the report lists
//     those hosts, so a new one is seen. A URL in a code span or a code block (a command, an
//     address to open on a local run: `http://localhost:3000`) is an instruction, not a link,
//     and is not counted; written bare in prose it is a link (GitHub makes it one) and counts.
// `npm run check:links` (in test:package) packs the tarball, extracts it and checks the
// Markdown in it; `node scripts/check-links.ts --dir <extracted package>` checks one already
// extracted; without arguments it checks the files `npm pack --dry-run` lists, in this
// checkout, as test/package/docs-links.test.ts does in npm test.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the docs once linked this repository on GitHub (owner/name). Nothing is published there. */
export const REPOSITORY = 'business-payments/business-payments-node';
/** The GitHub owner of that address: no URL under it (on github.com or raw.githubusercontent.com) leads anywhere. */
export const OWNER = REPOSITORY.split('/')[0]!;

/** A link or image reference found in a Markdown file. */
export interface Link {
  target: string;
  line: number;
  image: boolean;
}

/** A link that does not hold where users read the file. */
export interface Problem {
  file: string;
  line: number;
  target: string;
  problem: string;
}

/** The files a reader has: the package as shipped (package-relative POSIX paths). */
export interface Tree {
  has(path: string): boolean;
  read(path: string): string | undefined;
}

export interface CheckInput {
  /** The Markdown files to check, as paths in `tree`. */
  files: readonly string[];
  tree: Tree;
  /** The repository checkout: a problem says when a file that is not shipped is in it. */
  repoRoot: string;
}

export interface Report {
  files: number;
  links: number;
  images: number;
  /** Of links and images: relative ones, ones into this repository on GitHub (each a problem), other URLs, same-page anchors. */
  relative: number;
  repository: number;
  external: number;
  samePage: number;
  /** The hosts of the other URLs (checked for syntax only), with how many links name each. */
  hosts: Record<string, number>;
  /** Anchors checked against a heading, wherever the link pointed. */
  anchors: number;
  problems: Problem[];
}

// ---------------------------------------------------------------- reading Markdown

/** The text with fenced code blocks (and, unless `keepSpans`, code spans and HTML comments) blanked, newlines kept. */
export function maskCode(markdown: string, keepSpans = false): string {
  const lines = markdown.split('\n');
  let fence: { char: string; length: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const open = /^\s*(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) fence = undefined;
      lines[i] = blank(line);
    } else if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) {
      fence = { char: open[1]![0]!, length: open[1]!.length };
      lines[i] = blank(line);
    }
  }
  let text = lines.join('\n');
  if (keepSpans) return text;
  text = text.replace(/<!--[\s\S]*?-->/g, blank);
  // Code spans: a run of n backticks up to the next run of exactly n.
  return text.replace(/(?<!`)(`+)(?!`)([\s\S]*?)(?<!`)\1(?!`)/g, blank);
}

const blank = (text: string) => text.replace(/[^\n]/g, ' ');

/** Every link and image reference of a Markdown text outside code, and the URLs into this repository's GitHub address inside code (a command to copy). */
export function findLinks(markdown: string): Link[] {
  let text = maskCode(markdown);
  const masked = text;
  const found: { index: number; target: string; image: boolean; end: number }[] = [];
  inlineLinks(text, found);
  const definitions = new Map<string, string>();
  for (const m of text.matchAll(/^ {0,3}\[([^\]]+)\]:[ \t]*(<[^>\n]*>|\S+)/gm)) {
    definitions.set(label(m[1]!), unbracket(m[2]!));
    found.push({ index: m.index, target: unbracket(m[2]!), image: false, end: m.index + m[0].length });
  }
  for (const m of text.matchAll(/(!?)\[((?:[^\]\n]|\n(?!\n))*)\]\[([^\]\n]*)\]/g)) {
    const name = label(m[3] || m[2]!);
    const target = definitions.get(name) ?? `[undefined reference: ${m[3] || m[2]}]`;
    found.push({ index: m.index, target, image: m[1] === '!', end: m.index + m[0].length });
  }
  for (const m of text.matchAll(/<(?:img|a|source)\b[^>]*?\s(?:src|href)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))[^>]*>/gi)) {
    found.push({ index: m.index, target: m[1] ?? m[2] ?? m[3]!, image: /^<(img|source)/i.test(m[0]), end: m.index + m[0].length });
  }
  for (const m of text.matchAll(/<((?:https?|mailto):[^>\s]+)>/g)) {
    found.push({ index: m.index, target: m[1]!, image: false, end: m.index + m[0].length });
  }
  // Bare URLs, which GitHub turns into links, in what is left.
  for (const f of found) text = text.slice(0, f.index) + blank(text.slice(f.index, f.end)) + text.slice(f.end);
  for (const m of text.matchAll(/https?:\/\/[^\s<>`"'\])]+/g)) {
    const target = m[0].replace(/[.,;:!?*_~]+$/, '');
    found.push({ index: m.index, target, image: false, end: m.index + target.length });
  }
  const own = new RegExp(
    `https?://(?:(?:www\\.)?github\\.com|raw\\.githubusercontent\\.com)/${OWNER}(?=[/#?\\s<>\`"')\\]]|$)[^\\s<>\`"'\\])]*`,
    'gi',
  );
  for (const m of markdown.matchAll(own)) {
    if (masked[m.index] !== ' ') continue; // outside code: found above
    const target = m[0].replace(/[.,;:!?*_~]+$/, '');
    found.push({ index: m.index, target, image: false, end: m.index + target.length });
  }
  return found
    .sort((a, b) => a.index - b.index)
    .map(({ index, target, image }) => ({ target, image, line: markdown.slice(0, index).split('\n').length }));
}

/** `[text](destination "title")` and `![alt](destination)`, brackets nested in the text allowed. */
function inlineLinks(text: string, found: { index: number; target: string; image: boolean; end: number }[]): void {
  for (let close = text.indexOf(']('); close !== -1; close = text.indexOf('](', close + 2)) {
    let depth = 0;
    let open = close - 1;
    for (; open >= 0; open--) {
      const c = text[open];
      if (c === '\n' && text[open - 1] === '\n')
        open = 0; // a paragraph break: no link text
      else if (text[open - 1] === '\\') continue;
      else if (c === ']') depth++;
      else if (c === '[' && depth-- === 0) break;
    }
    if (open < 0) continue;
    const destination = /^[ \t]*\n?[ \t]*(<[^>\n]*>|(?:[^\s()]|\((?:[^\s()])*\))+)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?[ \t]*\)/.exec(
      text.slice(close + 2),
    );
    const image = text[open - 1] === '!';
    if (destination)
      found.push({
        index: image ? open - 1 : open,
        target: unbracket(destination[1]!),
        image,
        end: close + 2 + destination[0].length,
      });
    else if (/^[ \t]*\)/.test(text.slice(close + 2))) found.push({ index: open, target: '', image, end: close + 3 });
  }
}

const unbracket = (target: string) => (target.startsWith('<') && target.endsWith('>') ? target.slice(1, -1) : target);
const label = (text: string) => text.trim().replace(/\s+/g, ' ').toLowerCase();

/** GitHub's anchor for a heading's rendered text (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The text GitHub renders for a heading's Markdown: code spans, links and emphasis reduced to their text. */
export function headingText(markdown: string): string {
  return markdown
    .split(/((?<!`)`+(?!`)[\s\S]*?(?<!`)`+(?!`))/)
    .map((part, i) => {
      if (i % 2 === 1) {
        const content = part.replace(/^`+|`+$/g, '');
        return /^ .*[^ ].* $/.test(content) ? content.slice(1, -1) : content;
      }
      return part
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
        .replace(/<[^>]+>/g, '')
        .replace(/(^|[^\p{L}\p{N}])_+|_+(?=$|[^\p{L}\p{N}])/gu, '$1')
        .replace(/\\(.)/g, '$1')
        .replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);
    })
    .join('')
    .trim();
}

/** Every anchor a Markdown file has on GitHub: one per heading (repeats get -1, -2 …), plus HTML ids and names. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const add = (slug: string) => {
    let candidate = slug;
    for (let n = 1; anchors.has(candidate); n++) candidate = `${slug}-${n}`;
    anchors.add(candidate);
  };
  const lines = maskCode(markdown, true).split('\n');
  lines.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx) return add(githubSlug(headingText(atx[1] ?? '')));
    // A setext heading: a paragraph line underlined with = or -.
    const previous = lines[i - 1] ?? '';
    if (/^ {0,3}(=+|-+)[ \t]*$/.test(line) && previous.trim() !== '' && !/^ {0,3}(#|>|\||[-*+][ \t]|\d+[.)][ \t])/.test(previous))
      add(githubSlug(headingText(previous)));
  });
  for (const m of maskCode(markdown).matchAll(/<[a-z][^>]*?\s(?:id|name)\s*=\s*["']([^"']+)["']/gi)) anchors.add(m[1]!);
  return anchors;
}

// ---------------------------------------------------------------- checking

/** Checks every link and image of `files`; see the top of this file for the rules. */
export function checkLinks(input: CheckInput): Report {
  const report: Report = {
    files: 0,
    links: 0,
    images: 0,
    relative: 0,
    repository: 0,
    external: 0,
    samePage: 0,
    hosts: {},
    anchors: 0,
    problems: [],
  };
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (key: string, read: () => string | undefined) => {
    if (!anchorCache.has(key)) anchorCache.set(key, anchorsOf(read() ?? ''));
    return anchorCache.get(key)!;
  };
  const checkAnchor = (anchors: Set<string>, fragment: string, where: string): string | undefined => {
    report.anchors++;
    const id = safeDecode(fragment);
    if (anchors.has(id)) return undefined;
    const near = [...anchors].find((a) => a.toLowerCase() === id.toLowerCase());
    return `no heading #${id} in ${where}${near ? ` (did you mean #${near}? anchors are lower case)` : ''}`;
  };
  for (const file of input.files) {
    const text = input.tree.read(file);
    if (text === undefined) throw new Error(`${file} is not in the tree`);
    report.files++;
    for (const link of findLinks(text)) {
      report[link.image ? 'images' : 'links']++;
      const problem = checkOne(link.target, file, input, report, anchorsIn, checkAnchor);
      if (problem) report.problems.push({ file, line: link.line, target: link.target, problem });
    }
  }
  return report;
}

type AnchorsIn = (key: string, read: () => string | undefined) => Set<string>;
type CheckAnchor = (anchors: Set<string>, fragment: string, where: string) => string | undefined;

function checkOne(target: string, file: string, input: CheckInput, report: Report, anchorsIn: AnchorsIn, checkAnchor: CheckAnchor) {
  if (target.startsWith('[undefined reference')) return 'a reference link whose label has no definition';
  if (target.trim() === '') return 'an empty link target';
  if (target.startsWith('#')) {
    report.samePage++;
    return checkAnchor(
      anchorsIn(`tree:${file}`, () => input.tree.read(file)),
      target.slice(1),
      file,
    );
  }
  if (target.startsWith('//')) return 'a protocol-relative URL: write https://';
  if (target.startsWith('/')) return 'a root-relative link resolves against nothing in the package: use a relative link or an absolute URL';
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return checkUrl(target, report);
  report.relative++;
  return checkRelative(target, file, input, anchorsIn, checkAnchor);
}

function checkRelative(target: string, file: string, input: CheckInput, anchorsIn: AnchorsIn, checkAnchor: CheckAnchor) {
  const [pathAndQuery = '', fragment] = splitOnce(target, '#');
  const path = safeDecode(pathAndQuery.split('?')[0]!);
  const resolved = posix.normalize(posix.join(posix.dirname(file), path));
  if (resolved.startsWith('../') || resolved === '..') return 'points outside the package';
  if (!input.tree.has(resolved)) {
    const folder = resolved.replace(/\/$/, '');
    if (input.tree.has(`${folder}/README.md`)) return `${resolved} is a folder, not a file: link a file in it (${folder}/README.md)`;
    if (resolved.startsWith('examples/') && isFile(input.repoRoot, resolved))
      return (
        `${resolved} is not shipped in the package: it is an example of the repository that package.json "files" ` +
        'leaves out (the repository is not published); ship it there, or name it as text, not as a link'
      );
    const hint = inRepository(input.repoRoot, resolved) ? `; it is in the repository, which is not published: ${nameIt(resolved)}` : '';
    return `${resolved} is not shipped in the package${hint}`;
  }
  if (fragment !== undefined && resolved.endsWith('.md'))
    return checkAnchor(
      anchorsIn(`tree:${resolved}`, () => input.tree.read(resolved)),
      fragment,
      resolved,
    );
  return undefined;
}

function checkUrl(target: string, report: Report) {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'not a valid URL';
  }
  if (/\s/.test(target)) return 'a URL with white space';
  if (!['https:', 'http:', 'mailto:'].includes(url.protocol)) return `unexpected scheme ${url.protocol}`;
  if (url.protocol !== 'mailto:' && !url.hostname) return 'a URL without a host';
  if (intoRepository(url)) {
    report.repository++;
    return (
      `a URL into the repository on GitHub, which is not published (nothing exists under github.com/${OWNER}/): ` +
      'link a shipped file (a guide, an example) relatively, or name a file of the repository as text'
    );
  }
  report.external++;
  const host = url.protocol === 'mailto:' ? `mailto:${url.pathname.split('@').pop()}` : url.hostname;
  report.hosts[host] = (report.hosts[host] ?? 0) + 1;
  return undefined;
}

/** A URL under this repository's GitHub owner: a page, a file, a raw file or the owner's own page. */
function intoRepository(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  if (host !== 'github.com' && host !== 'www.github.com' && host !== 'raw.githubusercontent.com') return false;
  return safeDecode(url.pathname.split('/')[1] ?? '').toLowerCase() === OWNER.toLowerCase();
}

/** What to write instead of a link to a file that is not shipped. */
const nameIt = (path: string) => `name it as text (\`${path}\` in the repository), not as a link`;

function inRepository(root: string, path: string): boolean {
  return isFile(root, path) || isDirectory(root, path);
}

function isFile(root: string, path: string): boolean {
  const full = resolve(root, path);
  return inside(root, full) && existsSync(full) && statSync(full).isFile();
}

function isDirectory(root: string, path: string): boolean {
  const full = resolve(root, path);
  return inside(root, full) && existsSync(full) && statSync(full).isDirectory();
}

const inside = (root: string, full: string) => !relative(resolve(root), full).startsWith('..');

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

// ---------------------------------------------------------------- the package

/** What `npm pack --dry-run` says the package ships (package-relative paths), without running scripts. */
export function packedFiles(root: string): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}

/** The files under `root` (a directory, e.g. an extracted tarball), restricted to `only` when given. */
export function directoryTree(root: string, only?: Iterable<string>): Tree & { paths: string[] } {
  const paths = only ? [...only] : walk(root).map((full) => relative(root, full).split(sep).join('/'));
  const set = new Set(paths);
  return {
    paths,
    has: (path) => set.has(path),
    read: (path) => (set.has(path) ? readFileSync(join(root, path), 'utf8') : undefined),
  };
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Packs the package into a temporary directory and extracts it: `<dir>/package` is what npm installs. */
export function packAndExtract(root: string): { dir: string; tarball: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'bp-links-'));
  const name = execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', dir], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .trim()
    .split('\n')
    .pop()!;
  execFileSync('tar', ['-xzf', join(dir, name), '-C', dir]);
  return { dir: join(dir, 'package'), tarball: name, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** One line per problem, then the figures. */
export function formatReport(report: Report, what: string): string {
  const lines = report.problems.map((p) => `✗ ${p.file}:${p.line}: ${p.target}\n    ${p.problem}`);
  const hosts = Object.entries(report.hosts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([host, n]) => (n > 1 ? `${host} ×${n}` : host))
    .join(', ');
  lines.push(
    `${report.problems.length === 0 ? '✓' : '✗'} links: ${report.files} Markdown files of ${what}; ${report.links} links and ` +
      `${report.images} images (${report.relative} relative, ${report.samePage} on the same page, ${report.repository} into the ` +
      `unpublished repository, ${report.external} elsewhere, syntax only${hosts ? `: ${hosts}` : ''}), ${report.anchors} anchors; ` +
      `${report.problems.length} problem(s)`,
  );
  return lines.join('\n');
}

function main(argv: string[]): number {
  const repoRoot = fileURLToPath(new URL('..', import.meta.url));
  const at = argv.indexOf('--dir');
  if (argv.includes('--pack')) {
    const packed = packAndExtract(repoRoot);
    try {
      const tree = directoryTree(packed.dir);
      const report = checkLinks({ files: tree.paths.filter((p) => p.endsWith('.md')), tree, repoRoot });
      console.log(formatReport(report, `the packed ${packed.tarball}`));
      return report.problems.length === 0 ? 0 : 1;
    } finally {
      packed.remove();
    }
  }
  const dir = at === -1 ? repoRoot : resolve(argv[at + 1] ?? '.');
  const tree = at === -1 ? directoryTree(repoRoot, packedFiles(repoRoot)) : directoryTree(dir);
  const report = checkLinks({ files: tree.paths.filter((p) => p.endsWith('.md')), tree, repoRoot });
  console.log(formatReport(report, at === -1 ? 'the package (npm pack --dry-run, this checkout)' : dir));
  return report.problems.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
