// The two things the webhook route needs besides the verifier: remembering which events
// were accepted, and a queue for the work. Both are in-memory stand-ins here.
import type { WebhookEvent } from 'business-payments/webhooks';

// Ids of events already accepted. USE YOUR DATABASE: a table with a unique key on the event
// id (INSERT … ON CONFLICT DO NOTHING tells you whether it is new). Memory is per instance,
// serverless runs many instances, and it is lost on every deploy and cold start.
const accepted = new Set<string>();

/**
 * True the first time an event id is seen, false for a duplicate delivery. A payment event
 * always has an id; an event of a shape the spec does not show may not, and cannot be
 * de-duplicated by it (it is accepted).
 */
export async function claimEvent(id: string | undefined): Promise<boolean> {
  if (id === undefined) return true;
  if (accepted.has(id)) return false;
  accepted.add(id);
  return true;
}

/** Forgets an id whose event could not be queued, so the service's retry is accepted. */
export async function releaseEvent(id: string | undefined): Promise<void> {
  if (id !== undefined) accepted.delete(id);
}

// Stand-in for your job queue (Inngest, QStash, SQS, BullMQ, a jobs table…). A worker takes
// events from it and does the slow part: fulfil the order, send the email. Fulfilment
// itself must be idempotent on merchant_ref and trx_id: a verify call may get there first.
export const queuedEvents: WebhookEvent[] = [];

export async function enqueue(event: WebhookEvent): Promise<void> {
  queuedEvents.push(event);
}
