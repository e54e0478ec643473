// The route table of the earlier generation: the same site (console, logo, CORS preflight),
// its checkout pages at the real product's link (/payment/checkout?expires&token&signature:
// no /checkout/{trx} there) and only three merchant routes, each behind that generation's
// authentication and Laravel's input reading. Any other path is the framework's 404 (and a
// known path with another method its 405), before authentication: laravel-errors.ts.
import { earlierIndex, getEarlierSiteInfo, logo } from './account.js';
import type { Ctx, ApiRequest } from './context.js';
import { isPreflight, preflight } from './cors.js';
import { earlierAuthenticate } from './earlier-auth.js';
import { laravelInput } from './earlier-input.js';
import { earlierInitiate, earlierVerify } from './earlier-payments.js';
import type { Exchange, Route } from './router.js';
import { CONSOLE, EARLIER_CHECKOUT, row, wantsJson } from './routes.js';
import { callerOf } from './steps.js';

type ApiHandler = (ctx: Ctx, req: ApiRequest) => Response | Promise<Response>;

const STEPS = [earlierAuthenticate, laravelInput];

function api(method: 'GET' | 'POST', path: string, handler: ApiHandler): Route {
  // Laravel answers HEAD on a GET route; a 405 names both.
  const methods = method === 'GET' ? (['GET', 'HEAD'] as const) : (['POST'] as const);
  const run = (x: Exchange) =>
    handler(x.service.ctx, { caller: callerOf(x), body: x.body, query: x.url.searchParams, params: x.params, headers: x.request.headers });
  return row(methods, path, run, STEPS, { allow: methods });
}

/** The earlier generation's three merchant routes (path in Laravel's form). */
export const EARLIER_API_ROUTES: readonly Route[] = [
  api('POST', '/api/v1/initiate-payment', earlierInitiate),
  api('GET', '/api/v1/verify-payment/{trxId}', earlierVerify),
  api('GET', '/api/v1/site-info', getEarlierSiteInfo),
];

/** Everything the sandbox answers when it plays the earlier generation. */
export const EARLIER_ROUTES: readonly Route[] = [
  row('GET', '/', (x) => earlierIndex(x.base), [], { when: wantsJson }),
  ...CONSOLE,
  row('OPTIONS', '/api/*', preflight, [], { when: isPreflight }),
  row('GET', '/assets/logo.svg', logo),
  ...EARLIER_CHECKOUT,
  ...EARLIER_API_ROUTES,
];
