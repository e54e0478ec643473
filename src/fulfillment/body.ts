// A webhook delivery's body, read with a bound: at most `max` bytes are held, and past that
// the source is let go (a Fetch body cancelled, a Node request's iteration ended), so a
// flood costs the process one chunk, not the body. The kit checks the headers before it
// asks for the body (delivery.ts): an unsigned or stale delivery is answered unread.
import type { WebhookHeaders } from '../webhooks/headers.js';
import { chunksOf, readBounded, type WebhookPayload } from '../webhooks/verify.js';
import { refuseReadBody } from '../webhooks/errors.js';

/**
 * A Node request as node:http and Express hand it (`IncomingMessage`): the headers, and the
 * body as an async iterable of bytes, not yet read.
 */
export interface NodeWebhookRequest extends AsyncIterable<Uint8Array> {
  /** `req.headers`. */
  readonly headers: WebhookHeaders;
  /** A body a framework has already read (express.raw's Buffer): used instead of the stream, and bounded alike. */
  readonly body?: unknown;
}

type Delivery = Request | NodeWebhookRequest | { payload: WebhookPayload; headers: WebhookHeaders };

/** The delivery's body; `undefined` when it is longer than `max` bytes (declared, streamed or given). */
export async function bodyOf(delivery: Delivery, max: number): Promise<WebhookPayload | undefined> {
  const d = delivery as Partial<Request & NodeWebhookRequest & { payload: unknown }>;
  const given = 'payload' in d ? d.payload : d.body;
  const request = typeof d.clone === 'function';
  if (!request && (given !== undefined || !d[Symbol.asyncIterator])) {
    // Given whole (the verifier refuses what is not bytes or a string). A string's UTF-8
    // length is at least its length, so only a shorter one is encoded to count it.
    const p = given as string;
    return (typeof p == 'string' ? p.length > max || new Blob([p]).size > max : ((p as Uint8Array | null)?.byteLength ?? 0) > max)
      ? undefined
      : p;
  }
  // A stream read before (a framework's body parser): refused as such (400), never read again
  // (it would give no bytes, a bad signature's 401, or wait for bytes that never come).
  refuseReadBody(d);
  // A declared length over the bound is refused before a byte is read.
  if (+(request ? d.headers!.get('content-length') : (d.headers as Record<string, string>)['content-length'])! > max) return;
  return readBounded(request ? chunksOf(d.body) : (d as NodeWebhookRequest), max);
}
