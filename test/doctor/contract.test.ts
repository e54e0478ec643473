// The contract drift check: the SDK's param and response schemas, turned into JSON Schema
// with zod's z.toJSONSchema, against the sandbox's own openapi.json, route by route
// (src/doctor/contract.ts states the rules). The two sides are written independently
// (the sandbox never imports the SDK); this is where they must agree.
import { describe, expect, test } from 'vitest';
import {
  compareParams,
  compareResult,
  contractDrift,
  provisionalDifferences,
  CONTRACT_ROUTES,
  type JSONSchema,
  type OpenAPIDoc,
} from '../../src/doctor/contract.js';
import { openApiDocument } from '../../src/testing/mock-service/openapi.js';

const doc = openApiDocument('https://sandbox.test') as OpenAPIDoc;
// Shown and provisional parts alike: the sandbox's document is the SDK's guess, exactly.
const drifts = [...contractDrift(doc), ...provisionalDifferences(doc)];

describe('the SDK and the sandbox describe the same API (openapi.json)', () => {
  test('every route and method is on both sides', () => {
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(CONTRACT_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort()).toEqual(documented);
  });

  // The parts the spec does not show (docs/spec-gaps.md): results read by provisional(), and
  // the plan body the check reads the sandbox's rules for. A difference there is advice only.
  test('the provisional parts are those the spec does not show', () => {
    const parts = Object.fromEntries(CONTRACT_ROUTES.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r.provisional ?? []]));
    expect(parts).toEqual({
      'POST /api/v1/payments': [],
      'GET /api/v1/payments': ['response'],
      'GET /api/v1/payments/{trx_id}': ['response'],
      'POST /api/v1/payments/{trx_id}/push': ['response'],
      'GET /api/v1/verify-payment/{trxId}': [],
      'POST /api/v1/initiate-payment': [],
      'GET /api/v1/balance': ['response'],
      'GET /api/v1/site-info': [],
      'POST /api/v1/payouts/preview': [],
      'POST /api/v1/payouts': ['response'],
      'GET /api/v1/payouts': ['response'],
      'GET /api/v1/payouts/{id}': ['response'],
      'POST /api/v1/billing/plans': ['body', 'response'],
      'POST /api/v1/billing/subscriptions': ['response'],
      'GET /api/v1/billing/invoices': ['response'],
      'GET /api/v1/openapi.json': [],
    });
  });

  test.each(CONTRACT_ROUTES)('$method $path: body, query and result agree', (route) => {
    const mine = drifts.filter(
      (line) => line.startsWith(`${route.path} `) || line.startsWith(`${route.method.toUpperCase()} ${route.path}:`),
    );
    expect(mine).toEqual([]);
  });

  test('no drift at all', () => expect(drifts).toEqual([]));

  test('the checker itself finds drift (a changed enum, a dropped field, a new requirement, a missing route)', () => {
    const found: string[] = [];
    const theirs: JSONSchema = {
      type: 'object',
      required: ['a'],
      properties: { a: { type: 'string', enum: ['x', 'y'] }, b: { type: 'number' } },
    };
    compareParams('t', { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string', enum: ['x'] } } }, theirs, found);
    compareResult('r', { type: 'object', required: ['c'], properties: { c: { type: 'string' } } }, theirs, found);
    expect(found).toEqual([
      't.a: enum SDK [x] vs doc [x,y]',
      't.b: the doc has it, the SDK does not',
      't: required SDK [a,b] vs doc [a]',
      'r.c: the SDK reads it, the doc does not have it',
      'r: the SDK requires [c], the doc does not promise them',
    ]);
    // The SDK's open enums are seen (else an enum check would pass for want of values).
    const changed = JSON.parse(JSON.stringify(doc)) as OpenAPIDoc & {
      components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> };
    };
    changed.components.schemas.Payout!.properties.status!.enum = ['SUCCESS'];
    // A provisional shape (payouts) differing is advice; a shown one (verify) is drift.
    expect(provisionalDifferences(changed)).toContain(
      '/api/v1/payouts → data.status: values SDK [AMBIGUOUS,FAILED,INPROGRESS,SUCCESS] vs doc [SUCCESS]',
    );
    expect(contractDrift(changed)).toEqual([]);
    const { ['/api/v1/balance']: _dropped, ...paths } = doc.paths;
    expect(contractDrift({ ...doc, paths })).toEqual(['GET /api/v1/balance: the SDK calls it, the document does not have it']);
  });
});
