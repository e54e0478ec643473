// The earlier generation's checkout link, in the real product's form: a Laravel signed URL
// `<base>/payment/checkout?expires=<unix s>&token=<encrypted>&signature=<64 hex>` that hides
// the trx_id (spec/deployed-generation.md: the merchant learns it from the IPN). The token is
// the trx_id encrypted with AES-256-GCM under a key of this service (derived from its random
// checkout key) and a fresh IV each time, written as Laravel's encrypter writes it: base64 of
// `{"iv","value","mac","tag"}`. The signature is the HMAC (hmac.ts, the checkout key) of the
// path and query without it. Nothing is kept per link: reading one is decrypting it.
import type { Ctx } from './context.js';
import { hmacHex } from './hmac.js';
import { safeEqual } from './util.js';

/** The link's path below the service's base. */
const EARLIER_CHECKOUT_PATH = '/payment/checkout';

/** Longer tokens are refused unread: one this service wrote is under 200 characters. */
const MAX_TOKEN = 1_024;
const IV_BYTES = 12;
const TAG_BYTES = 16;

// One AES key per service, made once from its checkout key (a WeakMap: gone with the service).
type AesKey = ReturnType<typeof crypto.subtle.importKey>;
const tokenKeys = new WeakMap<Ctx, AesKey>();

function tokenKey(ctx: Ctx): AesKey {
  let key = tokenKeys.get(ctx);
  if (!key) {
    key = hmacHex(ctx.checkoutKey, 'earlier checkout token key').then((hex) =>
      crypto.subtle.importKey('raw', bytesOfHex(hex), { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']),
    );
    tokenKeys.set(ctx, key);
  }
  return key;
}

function bytesOfHex(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const base64 = (bytes: Uint8Array): string => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''));

/** Standard base64 to bytes; throws on anything else (atob). */
function bytesOf(text: unknown): Uint8Array<ArrayBuffer> {
  if (typeof text !== 'string') throw new TypeError('not base64');
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** The trx_id encrypted: base64 of Laravel's `{"iv","value","mac","tag"}` (GCM: no mac). */
async function sealTrx(ctx: Ctx, trx: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await tokenKey(ctx), new TextEncoder().encode(trx)));
  const value = sealed.subarray(0, sealed.length - TAG_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  return base64(new TextEncoder().encode(JSON.stringify({ iv: base64(iv), value: base64(value), mac: '', tag: base64(tag) })));
}

/** The trx_id a token carries, or null for anything this service did not write (never a throw). */
export async function trxOfToken(ctx: Ctx, token: string): Promise<string | null> {
  if (token.length === 0 || token.length > MAX_TOKEN) return null;
  try {
    const payload = JSON.parse(new TextDecoder().decode(bytesOf(token))) as Record<string, unknown> | null;
    const iv = bytesOf(payload?.iv);
    const tag = bytesOf(payload?.tag);
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return null;
    const value = bytesOf(payload?.value);
    const sealed = new Uint8Array(value.length + TAG_BYTES);
    sealed.set(value);
    sealed.set(tag, value.length);
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, await tokenKey(ctx), sealed);
    return new TextDecoder('utf-8', { fatal: true }).decode(plain);
  } catch {
    return null; // not base64, not JSON, a field missing, or the tag does not authenticate it
  }
}

/** What the signature covers: the path and the query without `signature`, as sent in order. */
function signedPart(query: URLSearchParams): string {
  const rest = new URLSearchParams(query);
  rest.delete('signature');
  return `${EARLIER_CHECKOUT_PATH}?${rest.toString()}`;
}

/** The payment's signed checkout link on the earlier generation. */
export async function earlierCheckoutLink(ctx: Ctx, base: string, trx: string, expiresMs: number): Promise<string> {
  const query = new URLSearchParams({ expires: String(Math.floor(expiresMs / 1000)), token: await sealTrx(ctx, trx) });
  const signature = await hmacHex(ctx.checkoutKey, signedPart(query));
  return `${base}${EARLIER_CHECKOUT_PATH}?${query.toString()}&signature=${signature}`;
}

/** True when the link's `expires` is a number and its signature is this service's over the rest. */
export async function earlierLinkSigned(ctx: Ctx, query: URLSearchParams): Promise<boolean> {
  const expires = query.get('expires') ?? '';
  const signature = query.get('signature') ?? '';
  if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature) || (query.get('token') ?? '').length > MAX_TOKEN) return false;
  return safeEqual(signature, await hmacHex(ctx.checkoutKey, signedPart(query)));
}
