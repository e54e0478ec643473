// Entry of `business-payments/testing`: tools for merchants' own tests.
export { signWebhook, type SignWebhookOptions, type SignedWebhook } from './testing/sign-webhook.js';
