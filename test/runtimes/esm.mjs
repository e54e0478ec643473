// Node, Deno and Bun: the package imported as ES modules.
import * as sdk from 'business-payments';
import * as webhooks from 'business-payments/webhooks';
import * as fulfillment from 'business-payments/fulfillment';
import * as payouts from 'business-payments/payouts';
import * as billing from 'business-payments/billing';
import { check } from './check.mjs';

console.log(JSON.stringify(await check(sdk, webhooks, JSON.parse(process.env.MATRIX_INPUT), fulfillment, payouts, billing)));
