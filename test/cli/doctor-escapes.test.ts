// `business-payments doctor` prints what servers said (an error message, the endpoint's
// answer): a hostile one's terminal escapes (title, clear screen, hidden OSC 8 links, forged
// lines) are printed escaped, inert and visible; --json stays valid JSON with them escaped.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createMockService, type MockServer, type MockService } from '../../src/testing.js';
import { runCli } from '../support/cli.js';

/** Sets the terminal's title, clears the screen, shows "link" for http://evil, forges a line, reorders text, and an 8-bit CSI. */
const HOSTILE = '\x1b]0;title\x07\x1b[2J\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\\n✓ everything: fine\r\u202egnp.exe\u009b2J';
// Every control character a terminal obeys: C0 (ESC, BEL, CR, LF…), DEL, C1, bidi overrides.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

let mock: MockService;
let sandbox: MockServer;
/** The merchant's endpoint: refuses every delivery with the hostile text. */
let endpoint: Server;
/** A "service" whose every answer is a 401 with the hostile text as its message. */
let service: Server;
const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const listening = async (server: Server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

beforeAll(async () => {
  mock = createMockService();
  sandbox = await mock.listen({ port: 0 });
  endpoint = createServer((_req, res) => void res.writeHead(400, { 'content-type': 'text/plain' }).end(HOSTILE));
  service = createServer(
    (_req, res) =>
      void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Unauthorized', message: HOSTILE })),
  );
  await Promise.all([listening(endpoint), listening(service)]);
});
afterAll(async () => {
  await sandbox.close();
  await mock.close();
  await Promise.all([endpoint, service].map((s) => new Promise((resolve) => s.close(resolve))));
});

const credentials = () => [
  '--merchant-key',
  mock.credentials.sandbox.merchantKey,
  '--api-key',
  mock.credentials.sandbox.apiKey,
  '--api-secret',
  mock.credentials.sandbox.apiSecret,
];
const doctor = (baseUrl: string, ...extra: string[]) =>
  runCli(['doctor', '--environment', 'sandbox', '--base-url', baseUrl, ...credentials(), ...extra], { env: {} });

describe('doctor: what a server said is printed inert', () => {
  test("the endpoint's answer: every escape shown escaped, no control character on stdout", async () => {
    const run = await doctor(sandbox.url, '--webhook-url', `${urlOf(endpoint)}/hooks`, '--webhook-secret', mock.credentials.webhookSecret);
    expect(run.code).toBe(1);
    const line = run.stdout.split('\n').find((l) => l.startsWith('✗ webhook endpoint'))!;
    expect(line).toContain(
      '\\x1b]0;title\\x07\\x1b[2J\\x1b]8;;http://evil\\x1b\\\\link\\x1b]8;;\\x1b\\\\\\n✓ everything: fine\\r\\u202egnp.exe\\x9b2J',
    );
    expect(run.stdout.replace(/\n/g, '')).not.toMatch(CONTROL);
    // One line per check, plus fixes and the summary: the answer's newline forged none.
    expect(run.stdout.split('\n').filter((l) => l.startsWith('✓ everything'))).toEqual([]);
  });

  test("a service's error message (every check that quotes it)", async () => {
    const run = await doctor(urlOf(service));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('\\x1b]8;;http://evil');
    expect(run.stdout.replace(/\n/g, '')).not.toMatch(CONTROL);
  });

  test('--json: valid JSON, the same text once parsed, and no control character in what is printed', async () => {
    const run = await doctor(
      sandbox.url,
      '--json',
      '--webhook-url',
      `${urlOf(endpoint)}/hooks`,
      '--webhook-secret',
      mock.credentials.webhookSecret,
    );
    expect(run.stdout.endsWith('\n')).toBe(true);
    expect(run.stdout.slice(0, -1)).not.toMatch(CONTROL);
    const parsed = JSON.parse(run.stdout) as { checks: Array<{ name: string; detail: string }> };
    expect(parsed.checks.find((c) => c.name === 'webhook endpoint')!.detail).toContain(HOSTILE);
    expect(run.stdout).toContain('\\u001b]8;;http://evil\\u001b\\\\link');
    expect(run.stdout).toContain('\\u202e');
    expect(run.stdout).toContain('\\u009b');
  });
});
