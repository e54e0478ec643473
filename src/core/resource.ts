import type { PaymentsClient } from '../client.js';

/** Base of every resource (`client.payments`, `client.payouts`…): holds the client. */
export abstract class APIResource {
  /** @internal */
  declare protected readonly _client: PaymentsClient;

  constructor(client: PaymentsClient) {
    // Not enumerable: JSON.stringify / inspect of a resource must not walk into the client.
    Object.defineProperty(this, '_client', { value: client, enumerable: false });
  }
}
