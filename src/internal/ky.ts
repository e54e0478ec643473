// ky is loaded on the first request, not when the package is imported: ky's module probes
// fetch support as it loads (it builds a Request with a stream body), which on Node pulls
// in undici, web streams and zlib: ~20 ms that a serverless cold start would pay before
// any call needs them.
import type * as Ky from 'ky';

type KyModule = typeof Ky;
let loaded: KyModule | undefined;
let loading: Promise<KyModule> | undefined;

/** ky, at once when loaded, else a Promise of it (the first call loads it). */
export function loadKy(): KyModule | Promise<KyModule> {
  return loaded ?? (loading ??= import('ky').then((module) => (loaded = namespace(module))));
}

// In the CommonJS build the import is of a CommonJS chunk, whose namespace has the chunk's
// exports object as `default` (ky's own default export is then `default.default`).
function namespace(module: KyModule): KyModule {
  const inner: unknown = module.default;
  return typeof inner === 'function' ? module : (inner as KyModule);
}

// ky's error guards. Before ky is loaded no ky error can exist, so each is false then.
/** ky's HTTPError (a status ky was told to throw on). */
export const isHTTPError = (error: unknown): error is Ky.HTTPError => loaded?.isHTTPError(error) ?? false;
/** ky's TimeoutError (an attempt or a body read ran out of time). */
export const isTimeoutError = (error: unknown): error is Ky.TimeoutError => loaded?.isTimeoutError(error) ?? false;
/** ky's NetworkError (fetch itself failed). */
export const isNetworkError = (error: unknown): error is Ky.NetworkError => loaded?.isNetworkError(error) ?? false;
/** Any error ky made. */
export const isKyError = (error: unknown): error is Ky.KyError => loaded?.isKyError(error) ?? false;
