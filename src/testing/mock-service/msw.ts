// mock.handlers: msw request handlers answering on the service's base URL. msw is loaded
// synchronously from the user's project at first use (it is an optional peer dependency,
// never bundled): require() of an ES module works on Node ≥ 20.19 / 22.12.
import type { RequestHandler } from 'msw';

type Msw = typeof import('msw');

function loadMsw(): Msw {
  const proc = (globalThis as { process?: { cwd?: () => string; getBuiltinModule?: (id: string) => unknown } }).process;
  const nodeModule = proc?.getBuiltinModule?.('node:module') as typeof import('node:module') | undefined;
  if (!nodeModule || !proc?.cwd) {
    throw new Error(
      'mock.handlers loads msw with require() and needs Node (≥ 22.12); elsewhere use mock.handle(request) in your own handler.',
    );
  }
  try {
    return nodeModule.createRequire(`${proc.cwd()}/`)('msw') as Msw;
  } catch (cause) {
    const missing = (cause as { code?: string }).code === 'MODULE_NOT_FOUND';
    throw new Error(
      missing
        ? 'mock.handlers needs msw in your project: npm install -D msw'
        : `mock.handlers could not load msw (npm install -D msw, Node ≥ 22.12): ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/**
 * One catch-all handler under `baseUrl` that answers with `handle`. A lost answer (payout
 * behaviour `loseAnswer`) is `Response.error()`, which msw turns into a network error: the
 * fetch rejects with a TypeError.
 */
export function mswHandlers(baseUrl: string, handle: (request: Request) => Promise<Response>): RequestHandler[] {
  const { http } = loadMsw();
  return [http.all(`${baseUrl}/*`, ({ request }) => handle(request))];
}
