import { PaymentsClient } from '../../src/index.js';
import type { ClientOptions } from '../../src/index.js';
import { BASE_URL, CREDENTIALS, fakeClock } from './fake-api.js';

/** A sandbox client aimed at the fake API, with a fake clock unless one is given. */
export function testClient(options: ClientOptions = {}) {
  const clock = fakeClock();
  const client = new PaymentsClient({ environment: 'sandbox', ...CREDENTIALS, baseUrl: BASE_URL, clock, ...options });
  return { client, clock };
}
