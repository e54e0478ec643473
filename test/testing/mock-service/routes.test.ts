// Three lists of the API, written apart, that must name the same routes: the client's route
// table (src/resources/routes.ts), the sandbox's own route table (its API rows,
// src/testing/mock-service/routes.ts; the sandbox never imports the client) and the OpenAPI
// document the sandbox serves. What each side says of a route's params and results is the
// contract check's part (test/doctor/contract.test.ts).
import { describe, expect, test } from 'vitest';
import { CLIENT_ROUTES } from '../../../src/resources/routes.js';
import { API_ROUTES, ROUTES } from '../../../src/testing/mock-service/routes.js';
import { setup } from '../../support/mock-service.js';

const client = Object.values(CLIENT_ROUTES)
  .map((route) => `${route.method} ${route.path}`)
  .sort();
const sandbox = API_ROUTES.map((route) => `${route.method} ${route.path}`).sort();
// The client's routes that send a JSON body (params that are not the path's id).
const CLIENT_ROUTES_WITH_BODY = new Set(
  Object.values(CLIENT_ROUTES)
    .filter((route) => route.method === 'POST')
    .map((route) => `${route.method} ${route.path}`),
);

describe('the client route table, the sandbox route table and the served OpenAPI document', () => {
  test('the client and the sandbox tables name the same routes, each once', () => {
    expect(new Set(client).size).toBe(client.length);
    expect(new Set(sandbox).size).toBe(sandbox.length);
    expect(sandbox).toEqual(client);
  });

  test('the served openapi.json documents exactly those routes', async () => {
    const { call } = setup();
    const doc = (await call('GET', '/api/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths)
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(client);
  });

  test('every documented route describes what it serves: a result schema (and a request body for a POST that takes one), never the bare fallback', async () => {
    const { call } = setup();
    type Operation = {
      operationId: string;
      requestBody?: unknown;
      responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
    };
    const doc = (await call('GET', '/api/v1/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const schema = operation.responses['200']?.content?.['application/json']?.schema;
        // openapi.json itself is any object; every other result has a schema of its own.
        if (operation.operationId !== 'getOpenApi' && (!schema || JSON.stringify(schema) === '{"type":"object"}'))
          missing.push(`${method.toUpperCase()} ${path} (${operation.operationId}): no result schema`);
        const takesBody = CLIENT_ROUTES_WITH_BODY.has(`${method.toUpperCase()} ${path}`);
        if (takesBody && !operation.requestBody)
          missing.push(`${method.toUpperCase()} ${path} (${operation.operationId}): no request body`);
      }
    }
    expect(missing).toEqual([]);
  });

  test("the sandbox's API rows are rows of its one router table", () => {
    for (const route of API_ROUTES) expect(ROUTES).toContain(route);
  });

  test('each table route answers on the sandbox (no 404 or 405 for a route either side lists)', async () => {
    const { call } = setup();
    for (const [name, route] of Object.entries(CLIENT_ROUTES)) {
      const path = route.path.replace(/\{\w+\}/, '123e4567-e89b-12d3-a456-426614174000');
      const reply = await call(route.method, path, route.method === 'POST' ? {} : undefined);
      // An unknown id is the route's own 404 ("No payout …"); an unknown route is the router's.
      expect(JSON.stringify(reply.body), name).not.toMatch(/No route for/);
      expect(reply.status, name).not.toBe(405);
    }
  });
});
