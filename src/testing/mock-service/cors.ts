// CORS of the API (the sandbox is a local development server that pages may call): the
// preflight of a cross-origin call, and the headers every API answer carries. The console
// sends none: only a page of its own origin may read its form token.
import type { Exchange } from './router.js';

/** A CORS preflight: an OPTIONS that names the method it asks for. */
export const isPreflight = (x: Exchange): boolean => x.request.headers.has('access-control-request-method');

/** The answer to a preflight of an API call: any origin, GET and POST, the headers asked for. */
export function preflight(x: Exchange): Response {
  const { headers } = x.request;
  return new Response(null, {
    status: 204,
    headers: {
      'Access-Control-Allow-Origin': headers.get('origin') ?? '*',
      'Access-Control-Allow-Methods': 'GET, POST',
      'Access-Control-Allow-Headers': headers.get('access-control-request-headers') ?? '*',
      'Access-Control-Max-Age': '600',
      Vary: 'Origin',
    },
  });
}

// API answers readable by a page on any origin: the SDK in a browser (dangerouslyAllowBrowser)
// reads the rate-limit headers and the Date header (clock skew) too.
export function allowCors(response: Response): void {
  try {
    if (response.headers.has('Access-Control-Allow-Origin')) return; // a preflight's own answer
    response.headers.set('Access-Control-Allow-Origin', '*');
    response.headers.set(
      'Access-Control-Expose-Headers',
      'Date, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, Idempotency-Key, Idempotent-Replayed, X-Request-Id',
    );
  } catch {
    // immutable headers: leave them
  }
}
