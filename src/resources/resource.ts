// What a resource holds: the client's routes, called by name. A resource class never sees
// the client, only this small caller over its transport, so the client can import every
// resource without the resources importing it back.
import type { APIPromise } from '../core/api-promise.js';
import type { PagePromise } from '../core/pagination.js';
import type { RequestOptions } from '../internal/options.js';
import type { Pace } from '../internal/pace.js';
import { template, type RequestSpec, type Transport } from '../internal/transport.js';
import { CLIENT_ROUTES, type ClientRoute, type ListRoute, type ResultOf, type RouteArgs, type RouteName, type RouteOf } from './routes.js';

/** @internal The calls a resource makes: routes of the table, by name (type-checked against it). */
export interface RouteCaller {
  /** A GET route of the table: `get('payouts.retrieve', id, options)`. */
  get<N extends RouteOf<'GET'>>(name: N, ...args: RouteArgs<N, [options?: RequestOptions]>): APIPromise<ResultOf<N>>;
  /** A POST route of the table: `post('payouts.create', params, options)`, the path id first when it has one. */
  post<N extends RouteOf<'POST'>>(name: N, ...args: RouteArgs<N, [params: unknown, options?: RequestOptions]>): APIPromise<ResultOf<N>>;
  /** A list route of the table: the first page now, every page on `for await`. */
  getPage<N extends ListRoute>(name: N, params: unknown, options?: RequestOptions): PagePromise<ResultOf<N>>;
  /** The client's pacer: what a resource sends on its own (waitForOutcome's polls) waits on it. */
  readonly pace: Pace;
}

/** @internal The route caller over `transport`: each name becomes its row's spec, sent through the pipeline. */
export function routeCaller(transport: Transport): RouteCaller {
  return {
    get: (name, ...args) => transport.request(...specOf(name, args, false)) as never,
    post: (name, ...args) => transport.request(...specOf(name, args, true)) as never,
    getPage: (name, params, options) => {
      const [spec] = specOf(name, [params], true);
      return transport.requestPage({ ...spec, item: spec.response, names: CLIENT_ROUTES[name].list }, options) as never;
    },
    get pace() {
      return transport.pace;
    },
  };
}

/** The pipeline's spec of a table route called with `args` (the path id first when it has one), and the options after them. */
function specOf(name: RouteName, args: unknown[], withParams: boolean): [RequestSpec<ClientRoute['result']>, RequestOptions | undefined] {
  const route: ClientRoute = CLIENT_ROUTES[name];
  const spec: RequestSpec<ClientRoute['result']> = { ...route, operation: name, response: route.result };
  // The placeholder's name keys the id's errors (`trx_id: …`).
  if (route.id) spec.pathParams = { [template(route.path)[1]!]: [route.id, args.shift()] };
  if (withParams) spec.value = args.shift();
  return [spec, args[0] as RequestOptions | undefined];
}

/** Base of every resource (`client.payments`, `client.payouts`…): holds the route caller. */
export abstract class APIResource {
  /** @internal */
  declare protected readonly _client: RouteCaller;

  /** @internal Resources are built by the client. */
  constructor(client: RouteCaller) {
    // Not enumerable: JSON.stringify / inspect of a resource must not walk into the transport.
    Object.defineProperty(this, '_client', { value: client, enumerable: false });
  }
}
