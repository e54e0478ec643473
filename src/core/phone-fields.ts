// The fields that hold a customer's phone number: personal data, kept out of log lines by
// the logger (internal/redact.ts) and out of error messages (core/error.ts).
export const PHONE_FIELDS: readonly string[] = ['customer_phone', 'destination', 'phone'];
