// Helpers of the sandbox integration suites: the simulated service on a real socket
// (`mock.listen()`, no msw), a client pointed at it, a real node:http webhook receiver that
// verifies every delivery with the SDK's verifier, and a bounded poll for async work.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PaymentsClient, type ClientOptions } from '../../src/index.js';
import { createMockService, type MockServer, type MockService, type MockServiceOptions } from '../../src/testing.js';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent, type WebhookVerificationReason } from '../../src/webhooks.js';

/** A running sandbox: the mock, its HTTP server and a sandbox client using it. */
export interface Sandbox {
  mock: MockService;
  server: MockServer;
  client: PaymentsClient;
  /** A client of the same sandbox with other options (credentials, clock, retries…). */
  clientWith(options: ClientOptions): PaymentsClient;
  close(): Promise<void>;
}

/** Starts `createMockService(options)` on 127.0.0.1:0 and a sandbox client for it. */
export async function startSandbox(options: MockServiceOptions = { timeScale: 0.001 }): Promise<Sandbox> {
  const mock = createMockService(options);
  const server = await mock.listen({ port: 0 });
  const clientWith = (extra: ClientOptions) =>
    new PaymentsClient({ environment: 'sandbox', ...mock.credentials.sandbox, baseUrl: server.url, ...extra });
  return {
    mock,
    server,
    client: clientWith({}),
    clientWith,
    close: async () => {
      await server.close();
      await mock.close();
    },
  };
}

/** Polls `probe` every few ms until it returns something truthy; fails after `timeoutMs` (≤ 5 s). */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 5_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + Math.min(timeoutMs, 5_000);
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() >= deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** One POST the receiver got, with what it made of it. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  /** Raw body bytes as received. */
  body: Buffer;
  /** Status the receiver answered. */
  status: number;
  /** The verified event, when verification passed. */
  event?: WebhookEvent;
  /** Why verification failed, when it did. */
  reason?: WebhookVerificationReason;
}

/** What the receiver answers for a verified delivery; default 200. */
type Answer = (event: WebhookEvent, sightings: number) => number;

/** A webhook endpoint on a real socket, verifying each delivery with `verifyWebhook`. */
export interface Receiver {
  url: string;
  /** Every POST, in order of arrival. */
  deliveries: ReceivedDelivery[];
  /** Verified events processed once each, by event id (the receiver dedupes retries). */
  processed: Map<string, WebhookEvent>;
  /** Secret(s) deliveries are verified with; may be changed by a test. */
  secret: string | string[];
  /** The receiver's clock for verification (default `Date.now`); may be changed by a test. */
  now: () => number;
  /** Status for a verified delivery (after processing); `sightings` counts deliveries of this id so far. */
  answer: Answer;
  verified(): ReceivedDelivery[];
  rejected(): ReceivedDelivery[];
  /** Verified deliveries of one event type. */
  ofType(type: string): ReceivedDelivery[];
  close(): Promise<void>;
}

export async function startReceiver(secret: string | string[]): Promise<Receiver> {
  const receiver = {
    deliveries: [] as ReceivedDelivery[],
    processed: new Map<string, WebhookEvent>(),
    secret,
    now: () => Date.now(),
    answer: (() => 200) as Answer,
  };
  const sightings = new Map<string, number>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const delivery: ReceivedDelivery = { headers: req.headers, body, status: 0 };
      receiver.deliveries.push(delivery);
      verifyWebhook({ payload: body, headers: req.headers, secret: receiver.secret, now: receiver.now })
        .then((event) => {
          delivery.event = event;
          const id = event.id!; // the sandbox gives every event an id
          const seen = (sightings.get(id) ?? 0) + 1;
          sightings.set(id, seen);
          if (!receiver.processed.has(id)) receiver.processed.set(id, event);
          delivery.status = receiver.answer(event, seen);
        })
        .catch((error: unknown) => {
          if (!(error instanceof WebhookVerificationError)) throw error;
          delivery.reason = error.reason;
          delivery.status = error.reason === 'invalid_signature' ? 401 : 400;
        })
        .catch(() => {
          delivery.status = 500;
        })
        .finally(() => {
          res.writeHead(delivery.status, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify(delivery.reason ? { error: delivery.reason } : { received: true }));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/webhooks`,
    verified: () => receiver.deliveries.filter((d) => d.event !== undefined),
    rejected: () => receiver.deliveries.filter((d) => d.reason !== undefined),
    ofType: (type: string) => receiver.deliveries.filter((d) => d.event?.type === type),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}
