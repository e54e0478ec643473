// Node: the package loaded with require() (the CommonJS build).
const sdk = require('business-payments');
const webhooks = require('business-payments/webhooks');
const fulfillment = require('business-payments/fulfillment');
const payouts = require('business-payments/payouts');
const billing = require('business-payments/billing');

import('./check.mjs')
  .then(({ check }) => check(sdk, webhooks, JSON.parse(process.env.MATRIX_INPUT), fulfillment, payouts, billing))
  .then((result) => console.log(JSON.stringify(result)));
