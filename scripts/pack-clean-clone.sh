#!/usr/bin/env bash
# The tarball as a release makes it: a clean clone (committed files only, no dist/), `npm ci`,
# `npm pack` with no build before it (the prepack script builds dist/). The tarball is installed
# into a fresh project as a user installs it, and every entry of its package.json "exports" is
# loaded by Node, with import (ESM) and with require (CommonJS): one line per entry, exit 1 on any
# that fails to load (ERR_MODULE_NOT_FOUND above all: a tarball without dist/). In CI (.ci/run):
# one npm ci and one build, timed.
#
#   npm run test:pack-clone                       clone this checkout's HEAD
#   bash scripts/pack-clean-clone.sh [repo] [--with path]...
#       repo: what to clone (default: this checkout). --with copies a path of this checkout's
#       working tree over the clone before npm ci: to try a packaging change before committing
#       it (package.json, say), where the lockfile still matches.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
repo="$root"
with=()
while [ $# -gt 0 ]; do
  case "$1" in
    --with) with+=("$2"); shift 2 ;;
    *) repo="$1"; shift ;;
  esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
started=$SECONDS
phase=$SECONDS
took() { echo "  $1: $((SECONDS - phase)) s"; phase=$SECONDS; }

echo "clean clone of $repo ($(git -C "$repo" rev-parse --short HEAD)), Node $(node --version), npm $(npm --version)"
git clone --quiet "$repo" "$work/clone"
for path in ${with[@]+"${with[@]}"}; do cp -R "$root/$path" "$work/clone/$(dirname "$path")/"; done
cd "$work/clone"
[ ! -e dist ] || { echo "✗ the clone has a dist/ before any build: is dist/ committed?"; exit 1; }
took clone
npm ci --ignore-scripts=false --no-audit --no-fund --loglevel=error >/dev/null
took 'npm ci'
# The build is prepack's: its output (tsup's) is kept for a failure only.
if ! npm pack --silent --pack-destination "$work" >"$work/pack.log" 2>&1; then
  cat "$work/pack.log"
  echo "✗ npm pack failed"
  exit 1
fi
tarball="$(ls "$work"/*.tgz)"
took 'npm pack (prepack: npm run build)'
# The listing in a file: `tar | grep -q` would fail under pipefail when grep stops early.
tar -tzf "$tarball" >"$work/files.txt"
built="$(grep -c '^package/dist/' "$work/files.txt" || true)"
if [ "$built" = 0 ]; then
  echo "✗ $(basename "$tarball") has no dist/: the prepack build did not run"
  exit 1
fi
echo "  packed: $(basename "$tarball") ($(du -k "$tarball" | cut -f1) kB, $built files in dist/)"

mkdir "$work/app"
cd "$work/app"
npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error "$tarball" zod >/dev/null
took 'install into a fresh project'

# Every entry of the installed package's "exports", both ways, in one Node process.
cat >entries.mjs <<'JS'
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const manifest = JSON.parse(readFileSync('node_modules/business-payments/package.json', 'utf8'));
let failed = 0;
for (const subpath of Object.keys(manifest.exports)) {
  const specifier = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
  const json = subpath.endsWith('.json');
  const ways = [];
  for (const [way, load] of [
    ['import', () => import(specifier, json ? { with: { type: 'json' } } : undefined)],
    ['require', async () => require(specifier)],
  ]) {
    try {
      const loaded = await load();
      ways.push(`${way} ✓ (${json ? 'json' : `${Object.keys(loaded).length} exports`})`);
    } catch (error) {
      failed++;
      ways.push(`${way} ✗ ${error.code ?? error.name}: ${String(error.message).split('\n')[0]}`);
    }
  }
  console.log(`${ways.some((w) => w.includes(' ✗ ')) ? '✗' : '✓'} ${specifier.padEnd(40)} ${ways.join('  ')}`);
}
process.exit(failed ? 1 : 0);
JS
status=0
node entries.mjs || status=1
took 'import and require every entry'
echo "$([ $status = 0 ] && echo '✓' || echo '✗') pack from a clean clone: $((SECONDS - started)) s in all"
exit $status
