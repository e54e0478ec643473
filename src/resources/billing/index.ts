import { APIResource, type RouteCaller } from '../resource.js';
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

  /** @internal Resources are built by the client. */
  constructor(client: RouteCaller) {
    super(client);
    this.plans = new Plans(client);
    this.subscriptions = new Subscriptions(client);
    this.invoices = new Invoices(client);
  }
}
