// The framework's own answers on the earlier generation (a Laravel 11 app): a path no route
// takes is a 404 (NotFoundHttpException) and a known path with another method a 405
// (MethodNotAllowedHttpException, with Allow), both before any authentication. As JSON when
// the request asks for it (Accept's first type is JSON, or an XMLHttpRequest accepting
// anything), else an HTML error page. Laravel writes that JSON pretty-printed with
// JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE (its exception renderer's flags, unlike the
// app's own answers); in debug mode (APP_DEBUG, the shipped default) with exception, file,
// line and a trace (without args).
import { json } from './responses.js';
import type { Exchange, Fallback } from './router.js';
import { html } from './util.js';

const VENDOR = '/var/www/html/vendor/laravel/framework/src/Illuminate/Routing';
const EXCEPTIONS = 'Symfony\\Component\\HttpKernel\\Exception';

/** What Laravel knows of a thrown HTTP exception. */
interface HttpException {
  status: 404 | 405;
  title: string;
  message: string;
  exception: string;
  line: number;
  trace: Array<Record<string, unknown>>;
  headers: Record<string, string>;
}

/** The path as Laravel's `$request->path()` gives it: below the base, without the leading slash. */
const laravelPath = (x: Exchange): string => x.path.replace(/^\/+|\/+$/g, '') || '/';

const frame = (file: string, line: number, fn: string, cls: string) => ({
  file: `${VENDOR}/${file}`,
  line,
  function: fn,
  class: `Illuminate\\Routing\\${cls}`,
  type: '->',
});

function notFound(x: Exchange): HttpException {
  return {
    status: 404,
    title: 'Not Found',
    message: `The route ${laravelPath(x)} could not be found.`,
    exception: `${EXCEPTIONS}\\NotFoundHttpException`,
    line: 45,
    trace: [
      frame('RouteCollection.php', 162, 'handleMatchedRoute', 'AbstractRouteCollection'),
      frame('Router.php', 763, 'match', 'RouteCollection'),
      frame('Router.php', 750, 'findRoute', 'Router'),
    ],
    headers: {},
  };
}

function notAllowed(x: Exchange, methods: string[]): HttpException {
  const allow = methods.join(', ');
  return {
    status: 405,
    title: 'Method Not Allowed',
    message: `The ${x.method} method is not supported for route ${laravelPath(x)}. Supported methods: ${allow}.`,
    exception: `${EXCEPTIONS}\\MethodNotAllowedHttpException`,
    line: 123,
    trace: [
      frame('AbstractRouteCollection.php', 108, 'requestMethodNotAllowed', 'AbstractRouteCollection'),
      frame('RouteCollection.php', 156, 'handleMatchedRoute', 'AbstractRouteCollection'),
      frame('Router.php', 763, 'match', 'RouteCollection'),
    ],
    headers: { Allow: allow },
  };
}

/** Laravel's `expectsJson()`: Accept's preferred type is JSON, or an XMLHttpRequest that accepts anything. */
function expectsJson(headers: Headers): boolean {
  const types = acceptable(headers.get('accept') ?? '');
  if (/\/json|\+json/.test(types[0] ?? '')) return true;
  const ajax = headers.get('x-requested-with') === 'XMLHttpRequest' && !headers.has('x-pjax');
  return ajax && (types.length === 0 || types[0] === '*/*' || types[0] === '*');
}

// Accept's media types, best quality first (ties in the order sent), lower case.
function acceptable(accept: string): string[] {
  const items = accept
    .split(',')
    .map((part, index) => {
      const [type = '', ...params] = part.split(';').map((p) => p.trim());
      const q = params.find((p) => /^q=/i.test(p));
      return { type: type.toLowerCase(), q: q === undefined ? 1 : Number(q.slice(2)) || 0, index };
    })
    .filter((item) => item.type !== '');
  return items.sort((a, b) => b.q - a.q || a.index - b.index).map((item) => item.type);
}

function render(x: Exchange, e: HttpException): Response {
  const { debug } = x.service.ctx;
  if (expectsJson(x.request.headers)) {
    const body = debug
      ? { message: e.message, exception: e.exception, file: `${VENDOR}/AbstractRouteCollection.php`, line: e.line, trace: e.trace }
      : { message: e.message };
    return json(e.status, body, e.headers, { pretty: true, unescapedSlashes: true, unescapedUnicode: true });
  }
  return new Response(errorPage(e, debug), { status: e.status, headers: { 'Content-Type': 'text/html; charset=UTF-8', ...e.headers } });
}

// Laravel's minimal error view ("404 | Not Found"); the message too in debug mode.
function errorPage(e: HttpException, debug: boolean): string {
  return `<!DOCTYPE html>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>${html(e.title)}</title>
        <style>body{font-family:ui-sans-serif,system-ui,sans-serif;background:#f7fafc;color:#a0aec0;display:flex;align-items:center;justify-content:center;min-height:100vh;margin:0}.code{padding:0 1rem;border-right:1px solid #cbd5e0;font-size:1.125rem}.title{margin-left:1rem;font-size:1.125rem;text-transform:uppercase;letter-spacing:.05em}</style>
    </head>
    <body class="antialiased">
        <div class="code">${e.status}</div>
        <div class="title">${html(e.title)}</div>${debug ? `\n        <p class="message">${html(e.message)}</p>` : ''}
    </body>
</html>
`;
}

/** The router's answers for the earlier generation: Laravel's 404 and 405. */
export const LARAVEL_FALLBACK: Fallback = {
  notFound: (x) => render(x, notFound(x)),
  // An OPTIONS on a known path is Laravel's 200 with Allow (methods joined by a bare comma).
  notAllowed: (x, methods) =>
    x.method === 'OPTIONS' ? new Response(null, { status: 200, headers: { Allow: methods.join(',') } }) : render(x, notAllowed(x, methods)),
};
