// Status → error class mapping, error fields, non-JSON bodies and the clock-skew hint.
import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, test, vi } from 'vitest';
import {
  APIError,
  AuthenticationError,
  InternalServerError,
  MerchantPendingApprovalError,
  NotFoundError,
  PaymentsError,
  PermissionDeniedError,
  RateLimitError,
  ResponseValidationError,
  UnprocessableEntityError,
  type ClientOptions,
} from '../../src/index.js';
import { rejection } from '../support/assertions.js';
import { BASE_URL, fixtures } from '../support/fake-api.js';
import { useFakeApi } from '../support/harness.js';

const { api, setup } = useFakeApi();
beforeEach(() => vi.stubEnv('BUSINESS_PAYMENTS_LOG', ''));

/** A client on the fake API; no retries unless asked, so one reply = one error. */
function client(options: ClientOptions = {}) {
  return setup({ maxRetries: 0, ...options }).client;
}

const createParams = { payment_amount: 25, currency_code: 'USD', ref_trx: 'order-1001' };

describe('HTTP status → error class', () => {
  const cases: Array<[number, string, new (...args: any[]) => APIError]> = [
    [400, 'Bad Request', UnprocessableEntityError],
    [401, 'Invalid API credentials', AuthenticationError],
    [403, 'Forbidden', PermissionDeniedError],
    [404, 'Not Found', NotFoundError],
    [422, 'Currency is not enabled for this merchant', UnprocessableEntityError],
    [429, 'Too Many Requests', RateLimitError],
    [500, 'Server Error', InternalServerError],
    [502, 'Bad Gateway', InternalServerError],
    [503, 'Service Unavailable', InternalServerError],
  ];

  test.each(cases)('%i → %s', async (status, label, ErrorClass) => {
    api.on('get', '/api/v1/balance', { status, body: { error: label, message: `the server says ${status}` } });
    const error = await rejection(client().balance.retrieve());

    expect(error).toBeInstanceOf(ErrorClass);
    expect(error.constructor).toBe(ErrorClass);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toBeInstanceOf(PaymentsError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(ErrorClass.name);
    expect(error.status).toBe(status);
    expect(error.label).toBe(label);
    expect(error.message).toContain(label);
    expect(error.message).toContain(`the server says ${status}`);
    expect(error.body).toEqual({ error: label, message: `the server says ${status}` });
    expect(api.seen).toHaveLength(1);
  });

  test('403 Merchant Pending Approval → MerchantPendingApprovalError, still a PermissionDeniedError', async () => {
    api.on('post', '/api/v1/payments', {
      status: 403,
      body: { error: 'Merchant Pending Approval', message: 'Your business is awaiting approval.' },
    });
    const error = await rejection(client().payments.create(createParams));
    expect(error).toBeInstanceOf(MerchantPendingApprovalError);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toBeInstanceOf(PaymentsError);
    expect(error.name).toBe('MerchantPendingApprovalError');
    expect(error.status).toBe(403);
    expect(error.label).toBe('Merchant Pending Approval');
    expect(error.message).toContain('Merchant Pending Approval');
    expect(error.message).toContain('Your business is awaiting approval.');
  });

  test('another 403 label stays a plain PermissionDeniedError', async () => {
    api.on('get', '/api/v1/balance', { status: 403, body: { error: 'Forbidden', message: 'No access.' } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).not.toBeInstanceOf(MerchantPendingApprovalError);
  });

  test('an unmapped status (418) is a plain APIError', async () => {
    api.on('get', '/api/v1/balance', { status: 418, body: { error: 'Teapot', message: 'Short and stout.' } });
    const error = await rejection(client().balance.retrieve());
    expect(error.constructor).toBe(APIError);
    expect(error).toBeInstanceOf(PaymentsError);
    expect(error.status).toBe(418);
    expect(error.label).toBe('Teapot');
    expect(error.message).toContain('Teapot');
    expect(error.message).toContain('Short and stout.');
  });

  test('a body without error/message still gives a useful message and the status', async () => {
    api.on('get', '/api/v1/balance', { status: 404, body: {} });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.label).toBeUndefined();
    expect(error.errors).toBeUndefined();
    expect(error.message).toContain('404');
  });
});

describe('error fields', () => {
  test('422 validation failure: .errors field map, .label, .message, .body, .headers', async () => {
    const body = {
      error: 'Validation failed',
      message: 'The given data was invalid.',
      errors: { currency_code: ['The currency code must be 3 characters.'], ref_trx: ['The ref trx has already been taken.', 'Second.'] },
    };
    api.on('post', '/api/v1/payments', { status: 422, body, headers: { 'X-Request-Id': 'req_123' } });
    const error = await rejection(client().payments.create(createParams));

    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error.status).toBe(422);
    expect(error.label).toBe('Validation failed');
    expect(error.message).toBe(
      '422 Validation failed: currency_code: The currency code must be 3 characters.; ref_trx: The ref trx has already been taken.',
    );
    expect(error.errors).toEqual({
      currency_code: ['The currency code must be 3 characters.'],
      ref_trx: ['The ref trx has already been taken.', 'Second.'],
    });
    expect(error.body).toEqual(body);
    expect(error.headers).toBeInstanceOf(Headers);
    expect(error.headers.get('x-request-id')).toBe('req_123');
  });

  test('422 with one failing field: the message names it with its first message, the map keeps all', async () => {
    api.on('post', '/api/v1/payments', {
      status: 422,
      body: {
        error: 'Validation failed',
        message: 'The given data was invalid.',
        errors: { ipn_url: ['The ipn url field is required.', 'Second.'] },
      },
    });
    const error = await rejection(client().payments.create(createParams));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error.message).toBe('422 Validation failed: ipn_url: The ipn url field is required.');
    expect(error.errors).toEqual({ ipn_url: ['The ipn url field is required.', 'Second.'] });
    expect((error.body as { message: string }).message).toBe('The given data was invalid.');
  });

  test('three failing fields are all named, on one line', async () => {
    const errors = {
      ipn_url: ['The ipn url field is required.'],
      currency_code: ['The currency code must be 3 characters.'],
      ref_trx: ['The ref trx has already been taken.'],
    };
    api.on('post', '/api/v1/payments', {
      status: 422,
      body: { error: 'Validation failed', message: 'The given data was invalid.', errors },
    });
    const error = await rejection(client().payments.create(createParams));
    expect(error.message).toBe(
      '422 Validation failed: ipn_url: The ipn url field is required.; currency_code: The currency code must be 3 characters.; ' +
        'ref_trx: The ref trx has already been taken.',
    );
    expect(error.errors).toEqual(errors);
  });

  test('more than three failing fields: the first two are named, then how many more', async () => {
    const errors = {
      ipn_url: ['The ipn url field is required.'],
      currency_code: ['The currency code must be 3 characters.'],
      ref_trx: ['The ref trx has already been taken.'],
      payment_amount: ['The payment amount must be at least 1.'],
    };
    api.on('post', '/api/v1/payments', {
      status: 400,
      body: { error: 'Validation failed', message: 'The given data was invalid.', errors },
    });
    const error = await rejection(client().payments.create(createParams));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error.message).toBe(
      '400 Validation failed: ipn_url: The ipn url field is required.; currency_code: The currency code must be 3 characters.; and 2 more',
    );
    expect(Object.keys(error.errors!)).toEqual(['ipn_url', 'currency_code', 'ref_trx', 'payment_amount']);
  });

  test('field messages are flattened to one line, shortened, and keep no phone number', async () => {
    const errors = {
      customer_phone: ['The customer phone +255 712 345 678 must be 10 - 15 digits.'],
      'customer.phone': ['Number 0712345678 is not valid.'],
      description: [`Too long:\n${'x'.repeat(500)}`],
    };
    api.on('post', '/api/v1/payments', {
      status: 422,
      body: { error: 'Validation failed', message: 'The given data was invalid.', errors },
    });
    const error = await rejection(client().payments.create(createParams));
    expect(error.message).not.toMatch(/[\r\n]/);
    expect(error.message).toContain('customer_phone: The customer phone [redacted] must be 10 - 15 digits.');
    expect(error.message).toContain('customer.phone: Number [redacted] is not valid.');
    expect(error.message).not.toMatch(/712|345678/);
    expect(error.message).toContain('description: Too long: xxx');
    expect(error.message.length).toBeLessThan(400);
    expect(error.message.endsWith('…')).toBe(true);
    // The map itself is the server's, untouched.
    expect(error.errors).toEqual(errors);
  });

  test.each([
    ['no errors map', { error: 'Validation failed', message: 'The given data was invalid.' }],
    ['an empty errors map', { error: 'Validation failed', message: 'The given data was invalid.', errors: {} }],
    ['errors that is not a map', { error: 'Validation failed', message: 'The given data was invalid.', errors: ['x'] }],
  ])('422 with %s keeps the label and server message', async (_what, body) => {
    api.on('post', '/api/v1/payments', { status: 422, body });
    const error = await rejection(client().payments.create(createParams));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error.message).toBe('422 Validation failed: The given data was invalid.');
  });

  test('a label the spec does not list is kept as sent', async () => {
    api.on('post', '/api/v1/payments', { status: 422, body: { error: 'Idempotency key reuse', message: 'Another body used this key.' } });
    const error = await rejection(client().payments.create(createParams));
    expect(error.label).toBe('Idempotency key reuse');
    expect(error.message).toBe('422 Idempotency key reuse: Another body used this key.');
  });

  test.each([
    [422, 'Currency is not enabled for this merchant', UnprocessableEntityError],
    [422, 'Receiver wallet for this currency is not available', UnprocessableEntityError],
    [401, 'Invalid API credentials', AuthenticationError],
    [403, 'Payout Rejected', PermissionDeniedError],
  ] as const)('spec label %i %s is kept as .label', async (status, label, ErrorClass) => {
    api.on('post', '/api/v1/payouts', { status, body: { error: label, message: 'Details from the server.' } });
    const error = await rejection(client().payouts.create({ amount: 100 }));
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error.label).toBe(label);
    expect(error.message).toContain(label);
    expect(error.message).toContain('Details from the server.');
    if (label === 'Payout Rejected') expect(error).not.toBeInstanceOf(MerchantPendingApprovalError);
  });

  test('RateLimitError.retryAfter from Retry-After seconds', async () => {
    api.on('get', '/api/v1/balance', { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': '17' } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(17);
  });

  test('RateLimitError.retryAfter from a Retry-After HTTP-date, measured on the client clock', async () => {
    const at = new Date(Date.now() + 42_000).toUTCString();
    api.on('get', '/api/v1/balance', { status: 429, body: { error: 'Too Many Requests' }, headers: { 'Retry-After': at } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(42);
  });

  test('RateLimitError without Retry-After has retryAfter undefined', async () => {
    api.on('get', '/api/v1/balance', { status: 429, body: { error: 'Too Many Requests' } });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBeUndefined();
  });
});

describe('bodies that are not JSON never escape as SyntaxError/TypeError', () => {
  function expectTyped(error: unknown) {
    expect(error).toBeInstanceOf(PaymentsError);
    expect(error).not.toBeInstanceOf(SyntaxError);
    expect(error).not.toBeInstanceOf(TypeError);
  }

  test('HTML page on 500 → InternalServerError with the raw text as body', async () => {
    const html = '<html><body><h1>502 Bad Gateway</h1>nginx</body></html>';
    api.on('get', '/api/v1/balance', { status: 500, body: html });
    const error = await rejection(client().balance.retrieve());
    expectTyped(error);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.status).toBe(500);
    expect(error.body).toBe(html);
    expect(error.label).toBeUndefined();
    expect(error.message).toContain('500');
  });

  test('truncated JSON on 422 → UnprocessableEntityError with the raw text as body', async () => {
    api.on('post', '/api/v1/payments', { status: 422, body: '{"error":"Validation fa' });
    const error = await rejection(client().payments.create(createParams));
    expectTyped(error);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error.body).toBe('{"error":"Validation fa');
  });

  test('empty body on 503 → InternalServerError', async () => {
    api.use(http.get(`${BASE_URL}/api/v1/balance`, () => new HttpResponse(null, { status: 503 })));
    const error = await rejection(client().balance.retrieve());
    expectTyped(error);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.status).toBe(503);
    expect(error.body).toBe('');
  });

  test('HTML page on 200 → ResponseValidationError keeping the raw text', async () => {
    const html = '<!doctype html><html><body>Welcome to nginx!</body></html>';
    api.on('get', '/api/v1/verify-payment/:id', { status: 200, body: html });
    const error = await rejection(client().payments.verify('TRX123456'));
    expectTyped(error);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error).not.toBeInstanceOf(APIError);
    expect(error.status).toBe(200);
    expect(error.body).toBe(html);
    expect(error.message).toContain('payments.verify');
  });

  test('truncated JSON on 200 → ResponseValidationError keeping the raw text', async () => {
    api.on('get', '/api/v1/verify-payment/:id', { status: 200, body: '{"status":"succ' });
    const error = await rejection(client().payments.verify('TRX123456'));
    expectTyped(error);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.body).toBe('{"status":"succ');
  });

  test('empty body on 200 → ResponseValidationError', async () => {
    api.on('get', '/api/v1/verify-payment/:id', { status: 200, body: '' });
    const error = await rejection(client().payments.verify('TRX123456'));
    expectTyped(error);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.body).toBe('');
    expect(error.message).toMatch(/empty/i);
  });

  test('JSON of the wrong shape on 200 → ResponseValidationError naming the field', async () => {
    const { amount: _dropped, ...withoutAmount } = fixtures.verified;
    api.on('get', '/api/v1/verify-payment/:id', { status: 200, body: withoutAmount });
    const error = await rejection(client().payments.verify('TRX123456'));
    expectTyped(error);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(Object.keys(error.errors)).toContain('amount');
    expect(JSON.parse(error.body)).toEqual(withoutAmount);
  });

  test('a JSON body that is not an object on 4xx (array, string, null) still maps cleanly', async () => {
    api.on('get', '/api/v1/balance', { status: 400, body: ['oops'] });
    const error = await rejection(client().balance.retrieve());
    expectTyped(error);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error.label).toBeUndefined();
    expect(error.body).toEqual(['oops']);
  });
});

describe('401 and the server clock', () => {
  const credentialsError = { error: 'Invalid API credentials', message: 'Invalid API credentials' };

  test('server Date more than 300 s behind the local clock → the message says the clock is ahead, by how much', async () => {
    api.on('get', '/api/v1/balance', {
      status: 401,
      body: credentialsError,
      headers: { Date: new Date(Date.now() - 400_000).toUTCString() },
    });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.label).toBe('Invalid API credentials');
    expect(error.message).toContain('Invalid API credentials');
    expect(error.message).toMatch(/clock/i);
    expect(error.message).toContain('400 s');
    expect(error.message).toMatch(/ahead/);
  });

  test('server Date more than 300 s ahead of the local clock → the message says the clock is behind', async () => {
    api.on('get', '/api/v1/balance', {
      status: 401,
      body: credentialsError,
      headers: { Date: new Date(Date.now() + 3_600_000).toUTCString() },
    });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.message).toMatch(/clock/i);
    expect(error.message).toContain('3600 s');
    expect(error.message).toMatch(/behind/);
  });

  test.each([-299_000, -120_000, 0, 200_000, 300_000])('server Date %i ms away (within 300 s) → no clock hint', async (offset) => {
    api.on('get', '/api/v1/balance', {
      status: 401,
      body: credentialsError,
      headers: { Date: new Date(Date.now() + offset).toUTCString() },
    });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.message).toContain('Invalid API credentials');
    expect(error.message).not.toMatch(/clock/i);
  });

  test('401 without a Date header → no clock hint', async () => {
    api.on('get', '/api/v1/balance', { status: 401, body: credentialsError });
    const error = await rejection(client().balance.retrieve());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.message).not.toMatch(/clock/i);
  });

  test('a skewed Date on a non-401 error adds no clock hint', async () => {
    api.on('get', '/api/v1/balance', {
      status: 403,
      body: { error: 'Forbidden', message: 'No.' },
      headers: { Date: new Date(Date.now() - 4_000_000).toUTCString() },
    });
    const error = await rejection(client().balance.retrieve());
    expect(error.message).not.toMatch(/clock/i);
  });
});

// The sandbox answers a reused ref_trx with DUPLICATE_REFERENCE; the error names the way out, in
// whatever field the server puts the code.
describe('DUPLICATE_REFERENCE says what to do', () => {
  test.each([
    [409, { error: 'DUPLICATE_REFERENCE', message: 'Transaction reference already exists' }],
    [422, { error: 'Validation failed', code: 'DUPLICATE_REFERENCE', message: 'The given data was invalid.' }],
    [400, { error: 'Bad Request', message: 'Transaction reference already exists' }],
  ])('%i %j', (status, body) => {
    const error = APIError.generate({ status, body, headers: new Headers() });
    expect(error.message).toContain('client.payments.list({ merchant_ref })');
    expect(error.message).toContain('new ref_trx');
  });

  test('other errors get no such hint', () => {
    const error = APIError.generate({ status: 409, body: { error: 'Conflict' }, headers: new Headers() });
    expect(error.message).not.toContain('merchant_ref');
  });
});
