// Chromium and the edge runtime: bundled with esbuild (browser conditions); the runner calls
// globalThis.__matrix(input).
import * as sdk from 'business-payments';
import * as webhooks from 'business-payments/webhooks';
import * as fulfillment from 'business-payments/fulfillment';
import * as payouts from 'business-payments/payouts';
import * as billing from 'business-payments/billing';
import { check } from './check.mjs';

globalThis.__matrix = (input) => check(sdk, webhooks, input, fulfillment, payouts, billing);
