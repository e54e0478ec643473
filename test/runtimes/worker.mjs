// Cloudflare workerd (miniflare): a Worker whose fetch handler runs the check on the input it is posted.
import * as sdk from 'business-payments';
import * as webhooks from 'business-payments/webhooks';
import * as fulfillment from 'business-payments/fulfillment';
import * as payouts from 'business-payments/payouts';
import * as billing from 'business-payments/billing';
import { check } from './check.mjs';

export default {
  async fetch(request) {
    return Response.json(await check(sdk, webhooks, await request.json(), fulfillment, payouts, billing));
  },
};
