// Part of the testing kit: it signs with the simulated service's own HMAC, never the
// client's, so a test that signs here and verifies with the SDK checks two implementations.
import { hmacHex } from './mock-service/hmac.js';

/** Inputs of {@link signWebhook}. */
export interface SignWebhookOptions {
  /** The event: an object (serialised with JSON.stringify) or the exact body string. */
  payload: string | Record<string, unknown>;
  /** The webhook signing secret. */
  secret: string;
  /** Unix seconds. Default: now. */
  timestamp?: number;
  /** Event header value. Default: the payload's `type`. */
  type?: string;
  /** Brand in the header names (`X-<Brand>-Signature`). Default `Service`. */
  brand?: string;
  /** X-Environment. Default `sandbox`. */
  environment?: 'sandbox' | 'production';
}

/** A signed delivery: send `body` with `headers`. */
export interface SignedWebhook {
  body: string;
  headers: Record<string, string>;
}

/**
 * Signs a webhook delivery exactly as the service does, for merchants' own tests of
 * their webhook handlers.
 *
 * @example
 * ```ts
 * import { signWebhook } from 'business-payments/testing';
 * const { body, headers } = await signWebhook({ payload: event, secret: 'whsec_test' });
 * const res = await fetch('http://localhost:3000/webhooks', { method: 'POST', body, headers });
 * ```
 */
export async function signWebhook(options: SignWebhookOptions): Promise<SignedWebhook> {
  const body = typeof options.payload === 'string' ? options.payload : JSON.stringify(options.payload);
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const type = options.type ?? (typeof options.payload === 'object' ? options.payload.type : undefined) ?? parsedType(body);
  const brand = options.brand ?? 'Service';
  const signature = await hmacHex(options.secret, `${timestamp}.`, body);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    [`X-${brand}-Signature`]: signature,
    [`X-${brand}-Timestamp`]: timestamp,
    'X-Environment': options.environment ?? 'sandbox',
  };
  if (typeof type === 'string') headers[`X-${brand}-Event`] = type;
  return { body, headers };
}

function parsedType(body: string): unknown {
  try {
    return (JSON.parse(body) as { type?: unknown }).type;
  } catch {
    return undefined;
  }
}
