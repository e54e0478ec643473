// The SIGSTOP cases of `npm run test:stores` (stores-real.check.ts): a real process holding a
// payment's claim (its onPaid running) is SIGSTOPped for twice its lease while a second process
// handles the same delivery, then SIGCONTed and its onPaid let return. Each process is
// sigstop-child.ts, bundled here once with esbuild (the source as it is; pg and redis from
// node_modules) into .cache/sigstop/, and run by this node with child_process.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { signWebhook } from '../../src/testing.js';
import type { ChildSetup } from './sigstop-child.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = 'whsec_test_sigstop';

let bundled: Promise<string> | undefined;
const childScript = () =>
  (bundled ??= (async () => {
    const outfile = join(root, '.cache/sigstop/child.mjs');
    await build({
      entryPoints: [join(root, 'test/fulfillment/sigstop-child.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outfile,
      logLevel: 'error',
    });
    return outfile;
  })());

/** A child process and its stdout lines; `line(prefix)` waits for the next unread line that starts so. */
class Child {
  readonly lines: string[] = [];
  stderr = '';
  private read = 0;
  private wake: () => void = () => {};
  constructor(readonly process: ChildProcessWithoutNullStreams) {
    createInterface({ input: process.stdout }).on('line', (line) => (this.lines.push(line), this.wake()));
    process.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
  }
  send(command: string) {
    this.process.stdin.write(`${command}\n`);
  }
  /** The rest of the next line starting with `prefix` (lines before it are passed by). */
  async line(prefix: string, ms = 10_000): Promise<string> {
    return (await this.first([prefix], ms))[1];
  }
  /** The next line starting with one of `prefixes`: which, and the rest of the line. */
  async first(prefixes: string[], ms = 10_000): Promise<[string, string]> {
    const deadline = Date.now() + ms;
    for (;;) {
      while (this.read < this.lines.length) {
        const line = this.lines[this.read++]!;
        const prefix = prefixes.find((prefix) => line === prefix || line.startsWith(`${prefix} `));
        if (prefix !== undefined) return [prefix, line.slice(prefix.length + 1)];
      }
      if (this.process.exitCode !== null || Date.now() > deadline)
        throw new Error(`no ${prefixes.join('/')} line from ${this.process.pid}: ${JSON.stringify(this.lines)} ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.wake = () => (clearTimeout(timer), resolve());
      });
    }
  }
  /** Its lines starting with `prefix`, so far. */
  all(prefix: string): string[] {
    return this.lines.filter((line) => line.startsWith(`${prefix} `)).map((line) => line.slice(prefix.length + 1));
  }
}

/** What one paused-holder run saw. */
export interface PausedRun {
  holder: Child;
  other: Child;
  /** The holder's answer and the other's first one (during the pause): `<status> <body>`. */
  holderAnswer: string;
  otherAnswer: string;
  /** The other's answer once the holder is done. */
  otherAfter: string;
  pausedMs: number;
  totalMs: number;
}

/**
 * Runs the case on a store: the holder takes the delivery and its onPaid starts (and does its
 * effect); it is SIGSTOPped for `2 × lease`; the other process then handles the same delivery
 * (on Redis its onPaid runs, and is let return); the holder is SIGCONTed and its onPaid let
 * return; the other handles the delivery once more.
 */
export async function pausedHolder(store: ChildSetup['store'], url: string, name: string, lease = 1_500): Promise<PausedRun> {
  const started = performance.now();
  const script = await childScript();
  const { body, headers } = await signWebhook({
    secret: SECRET,
    environment: 'sandbox',
    payload: {
      id: `evt_${name}`,
      type: 'payment.completed',
      api_version: '2024-06-01',
      created_at: new Date().toISOString(),
      data: { trx_id: 'TRX_SIGSTOP', merchant_ref: 'order-sigstop~a1', status: 'completed', amount: { value: 25, currency: 'USD' } },
    },
  });
  const setup: ChildSetup = { store, url, name, lease, secret: SECRET, delivery: { payload: body, headers } };
  const start = () => new Child(spawn(process.execPath, [script, JSON.stringify(setup)], { stdio: 'pipe' }));
  const holder = start();
  const other = start();
  try {
    await Promise.all([holder.line('READY'), other.line('READY')]);
    holder.send('GO');
    await holder.line('EFFECT');
    process.kill(holder.process.pid!, 'SIGSTOP');
    const paused = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 2 * lease));
    other.send('GO');
    // The other runs onPaid (Redis: the holder's key ran out), or answers at once (Postgres: busy).
    const [seen, rest] = await other.first(['ANSWER', 'EFFECT']);
    if (seen === 'EFFECT') other.send('FINISH');
    const otherAnswer = seen === 'ANSWER' ? rest : await other.line('ANSWER');
    process.kill(holder.process.pid!, 'SIGCONT');
    const pausedMs = performance.now() - paused;
    holder.send('FINISH');
    const holderAnswer = await holder.line('ANSWER');
    other.send('GO');
    const otherAfter = await other.line('ANSWER');
    return { holder, other, holderAnswer, otherAnswer, otherAfter, pausedMs, totalMs: performance.now() - started };
  } finally {
    for (const child of [holder, other]) {
      if (child.process.exitCode === null) {
        child.process.kill('SIGCONT');
        child.process.kill('SIGKILL');
      }
    }
  }
}
