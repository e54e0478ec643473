// The same webhook route on the Edge runtime: POST /api/webhooks/payments-edge. Deploy one of
// the two routes. The kit runs here as is (WebCrypto for the signature, fetch for the verify
// call; no node:* module), and so must whatever your handlers import. As on the Node.js route,
// the headers are checked before the body is read, and at most 1 MiB of it is.
//
// The edge route runs in an isolate of its own: it shares no memory with the Node.js side,
// so the in-memory stand-ins of this example (the orders, memoryStore) are its own, and an
// order created by the checkout action is unknown here. On the edge, give the kit a store
// and orders it reaches over HTTP (postgresStore on Neon's serverless driver, for one).
import { fulfillment } from '../../../../lib/fulfillment';

export const runtime = 'edge';

export const POST = (request: Request): Promise<Response> => fulfillment().handleWebhook(request);
