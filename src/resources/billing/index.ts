import type { PaymentsClient } from '../../client.js';
import { APIResource } from '../../core/resource.js';
import { Invoices } from './invoices.js';
import { Plans } from './plans.js';
import { Subscriptions } from './subscriptions.js';

/** Recurring billing: every charge is a USSD push the customer approves with a PIN. */
export class Billing extends APIResource {
  /** Recurring plans. */
  readonly plans: Plans;
  /** Subscriptions with recorded consent. */
  readonly subscriptions: Subscriptions;
  /** Invoices. */
  readonly invoices: Invoices;

  constructor(client: PaymentsClient) {
    super(client);
    this.plans = new Plans(client);
    this.subscriptions = new Subscriptions(client);
    this.invoices = new Invoices(client);
  }
}
