// Next.js App Router route handler: POST /api/webhooks/payments
//
// Route handlers get the untouched body, and the kit reads it as bytes: never hand anything
// `await request.json()` to a verifier (re-serialised JSON is not the bytes that were
// signed). Pages Router API routes are different: they parse the body unless
// `export const config = { api: { bodyParser: false } }`; see docs/webhooks.md.
//
// Bounded: the kit checks the signature and timestamp headers before it reads the body (401
// without them, or stale), and reads at most maxBodyBytes (1 MiB by default) of it: a longer
// body is 413, the rest unread.
//
// The answer: 200 done (a duplicate too), 401 unsigned or bad signature, 409 in flight
// elsewhere (the return page has it), 413 too large, 500 a handler threw (the service
// delivers again). A missing or whitespace-padded secret throws ConfigurationError: Next
// answers 500 and the service retries, so fix the variable and the deliveries come through.
import { fulfillment } from '../../../../lib/fulfillment';

export const runtime = 'nodejs';

export const POST = (request: Request): Promise<Response> => fulfillment().handleWebhook(request);
