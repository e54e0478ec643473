// A stand-in for the PaymentsClient the fulfillment kit is given: verify answers with
// `answer(trxId)` (a vi.fn, so calls can be checked), and list yields `payments`.
import { vi } from 'vitest';
import type { PaymentRecord, VerifiedTransaction } from '../../src/index.js';
import type { FulfillmentClient } from '../../src/fulfillment.js';

export function fakeClient(answer: (trxId: string) => VerifiedTransaction, payments: Iterable<PaymentRecord> = []) {
  const verify = vi.fn(async (trxId: string) => answer(trxId));
  const client: FulfillmentClient = {
    environment: 'sandbox',
    payments: {
      verify,
      list: async function* () {
        yield* payments;
      },
    },
  };
  return { client, verify };
}
