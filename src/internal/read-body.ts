// Reading a 2xx body with bounds. A broken or hostile server (a 1 GiB body, a gzip bomb
// that inflates 1000-fold, JSON nested thousands deep) must end in a typed error, not in
// gigabytes of memory or a bare RangeError from whatever walks the parsed value.
import { bodyError, type DecodeContext } from './parse.js';

/**
 * Deepest nesting of arrays and objects a JSON response may have. No answer of this API
 * needs more than about 15 levels (the sandbox's openapi.json, the deepest, has 14). 128 is
 * serde_json's default, and far below the depth (a few thousand) where V8's recursive
 * built-ins (`String()` of an array, `JSON.stringify`, `structuredClone`) overflow the stack.
 */
export const MAX_JSON_DEPTH = 128;

/** The bounds of one body read: bytes, time, and the caller's signal. */
export interface ReadBounds {
  /** Most bytes read, after fetch has undone any `content-encoding` (maxResponseBytes). */
  limit: number;
  /** Ms the read may take (the call's per-attempt `timeout`). */
  timeout: number;
  /** The caller's signal: aborts a read in progress. */
  signal?: AbortSignal | undefined;
}

/**
 * The text of a 2xx body: at most `limit` bytes, counted as they arrive from fetch (after
 * it has undone any `content-encoding`), and JSON at most {@link MAX_JSON_DEPTH} deep;
 * anything more is a `ResponseValidationError`. A read that takes longer than `timeout`, or
 * that the caller's signal aborts, cancels the body (which closes the connection) and
 * rejects with a `TimeoutError` DOMException (as `AbortSignal.timeout` would) or the signal's
 * reason.
 */
export async function readBody(response: Response, { limit, timeout, signal }: ReadBounds, context: DecodeContext): Promise<string> {
  const { body } = response;
  // No body (204), or a custom fetch's Response whose body is no web stream (node-fetch's):
  // read by the Response itself, under the same timeout; only the depth is checked then.
  const reader = body && typeof body.getReader === 'function' ? body.getReader() : undefined;
  // One way to stop, for the timeout and the signal alike: cancelling the reader ends the
  // read pending (the rest is neither downloaded nor inflated), and the race rejects with why.
  let timer: ReturnType<typeof setTimeout> | undefined;
  let abort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    const stop = (reason: unknown) => (reader?.cancel().catch(() => undefined), reject(reason));
    timer = setTimeout(() => stop(new DOMException(`the body read ran past ${timeout} ms`, 'TimeoutError')), timeout);
    abort = () => stop(signal!.reason);
    if (signal?.aborted) abort();
    signal?.addEventListener('abort', abort, { once: true });
  });
  let text: string;
  try {
    // Promise.race observes both sides: whichever settles later is never an unhandled rejection.
    text = await Promise.race([reader ? readAll(reader, limit, response, context) : response.text(), stopped]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', abort!);
  }
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) throw bodyError(response, context, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, text);
  return text;
}

// Reads the stream to its end, at most `limit` bytes: past them it cancels the reader and
// throws. A reader cancelled from outside ends early; readBody has rejected by then.
async function readAll(reader: ReadableStreamDefaultReader<Uint8Array>, limit: number, response: Response, context: DecodeContext) {
  // Decoded as the chunks come (a character split between two is joined), so the bytes are
  // never held a second time in one joined copy: UTF-8 with the BOM dropped and bad bytes
  // replaced, as `Response.text()` decodes. A decoder per read: streaming keeps state in it.
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => undefined);
      throw bodyError(
        response,
        context,
        `a body larger than maxResponseBytes (${limit} bytes), not read further (raise it if such a body is expected)`,
        '',
      );
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

/**
 * Whether `text` opens more than `max` arrays or objects inside one another; brackets inside
 * strings do not count. One pass over the text; one too short to be that deep is not read.
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // A backslash escapes the next character; a quote ends the string.
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/**
 * ky's `parseJson`, which it uses only for error bodies (`error.data`). A body nested deeper
 * than {@link MAX_JSON_DEPTH} keeps its top levels (the label, the message, the field map)
 * and has what lies deeper replaced by `'…'`, so `APIError.body` never holds a value that
 * makes `JSON.stringify` or `structuredClone` in the caller's logger overflow the stack.
 */
export const parseErrorJson = (text: string): unknown => {
  const value: unknown = JSON.parse(text);
  return nestedDeeperThan(text, MAX_JSON_DEPTH) ? pruned(value, 0) : value;
};

// Bounded recursion: it stops at MAX_JSON_DEPTH. fromEntries keeps a `__proto__` key a key.
function pruned(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_JSON_DEPTH) return '…';
  if (Array.isArray(value)) return value.map((item) => pruned(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, pruned(item, depth + 1)]));
}
