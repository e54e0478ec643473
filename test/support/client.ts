import { PaymentsClient } from '../../src/index.js';
import type { ClientOptions } from '../../src/index.js';
import { BASE_URL, CREDENTIALS } from './fake-api.js';

/** A sandbox client aimed at the fake API. */
export function testClient(options: ClientOptions = {}) {
  const client = new PaymentsClient({ environment: 'sandbox', ...CREDENTIALS, baseUrl: BASE_URL, ...options });
  return { client };
}
