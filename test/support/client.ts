import { PaymentsClient } from '../../src/index.js';
import type { ClientOptions } from '../../src/index.js';
import { resolveOptions } from '../../src/internal/options.js';
import { pace } from '../../src/internal/pace.js';
import { Transport } from '../../src/internal/transport.js';
import { BASE_URL, CREDENTIALS } from './fake-api.js';

/** A sandbox client aimed at the fake API. */
export function testClient(options: ClientOptions = {}) {
  const client = new PaymentsClient({ environment: 'sandbox', ...CREDENTIALS, baseUrl: BASE_URL, ...options });
  return { client };
}

/** The request pipeline alone, as a client with these options builds it: for a spec no route of the table has. */
export function testTransport(options: ClientOptions = {}): Transport {
  const resolved = resolveOptions({ environment: 'sandbox', ...CREDENTIALS, baseUrl: BASE_URL, ...options });
  return new Transport(resolved, pace(resolved.pollingBudget));
}
