// A webhook delivery's body, read with a bound: at most `max` bytes are held, and past that
// the source is let go (a Fetch body cancelled, a Node request's iteration ended), so a
// flood costs the process one chunk, not the body. The kit checks the headers before it
// asks for the body (create.ts): an unsigned or stale delivery is answered unread.
import type { WebhookHeaders } from '../webhooks/headers.js';
import type { WebhookPayload } from '../webhooks/verify.js';
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
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Stopping early ends the iteration: a Fetch body is cancelled; a Node request is destroyed
  // (Node keeps its socket for the answer, and stops reading the connection).
  for await (const chunk of request ? chunksOf(d.body) : (d as NodeWebhookRequest)) {
    if ((size += chunk.byteLength) > max) return;
    chunks.push(chunk);
  }
  // One buffer of the chunks (not a Blob: its typing differs between the DOM and Node libs).
  const body = new Uint8Array(size);
  size = 0;
  for (const chunk of chunks) body.set(chunk, (size += chunk.byteLength) - chunk.byteLength);
  return body;
}

// A Fetch body through its reader (async iteration of a ReadableStream is not everywhere),
// cancelled when the caller stops early.
async function* chunksOf(body: ReadableStream<Uint8Array> | null | undefined) {
  const reader = body?.getReader();
  try {
    for (let next; reader && !(next = await reader.read()).done;) yield next.value;
  } finally {
    reader?.cancel().catch(() => {});
  }
}
