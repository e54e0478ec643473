// What every runtime of the matrix proves, with the packed tarball: a signed client call the
// sandbox accepts (create, then verify, typed results), an API error mapped to its class, the
// request id of a result and the trace of a call (where node:diagnostics_channel is), and
// verifyWebhook accepting a good delivery and refusing a tampered one, and the fulfillment kit
// settling a payment once and refusing a forged delivery. It takes the package's
// modules as arguments (imported, required or bundled by the runtime's own wrapper) and never
// throws: it resolves to { ok, steps } so every runtime reports the same way.
//
// `input`: { baseUrl, credentials: { merchantKey, apiKey, apiSecret }, webhook: { secret, body,
// headers }, browser?: boolean }.

export async function check(sdk, webhooks, input, fulfillment) {
  const steps = [];
  const step = async (name, fn) => {
    try {
      const detail = await fn();
      steps.push({ name, ok: true, detail: detail ?? '' });
    } catch (error) {
      steps.push({ name, ok: false, detail: `${error?.name ?? 'Error'}: ${error?.message ?? String(error)}` });
    }
  };
  const options = { ...input.credentials, environment: 'sandbox', baseUrl: input.baseUrl, maxRetries: 0 };

  if (input.browser) {
    await step('browser guard', () => {
      try {
        new sdk.PaymentsClient(options);
      } catch (error) {
        if (error instanceof sdk.ConfigurationError) return 'refused without dangerouslyAllowBrowser';
        throw error;
      }
      throw new Error('a client was made in a browser without dangerouslyAllowBrowser');
    });
    options.dangerouslyAllowBrowser = true;
  }

  const client = new sdk.PaymentsClient(options);
  let trx;
  await step('payments.create', async () => {
    const payment = await client.payments.create({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: `matrix-${Date.now()}`,
      ipn_url: 'https://shop.example.com/ipn',
    });
    if (typeof payment.trx_id !== 'string' || payment.status !== 'pending')
      throw new Error(`unexpected payment ${JSON.stringify(payment)}`);
    trx = payment.trx_id;
    return trx;
  });
  await step('payments.verify', async () => {
    const verified = await client.payments.verify(trx ?? 'none');
    if (verified.status !== 'pending' || typeof verified.amount !== 'number') throw new Error(`unexpected ${JSON.stringify(verified)}`);
    return verified.status;
  });
  await step('API error class', async () => {
    try {
      await client.payments.retrieve('TRXDOESNOTEXIST');
    } catch (error) {
      if (error instanceof sdk.NotFoundError && error.status === 404) return 'NotFoundError 404';
      throw error;
    }
    throw new Error('a missing payment resolved');
  });

  await step('request id, and tracing where diagnostics_channel is', async () => {
    const { requestId } = await client.balance.retrieve().withResponse();
    if (!/^req_/.test(requestId ?? '')) throw new Error(`withResponse().requestId ${requestId}`);
    const dc = globalThis.process?.getBuiltinModule?.('node:diagnostics_channel');
    if (!dc) return `requestId ${requestId}; no diagnostics_channel: tracing skipped`;
    const seen = [];
    const keep = (message) => seen.push({ ...message });
    dc.subscribe('tracing:business-payments:request:asyncEnd', keep);
    try {
      await client.balance.retrieve();
    } finally {
      dc.unsubscribe('tracing:business-payments:request:asyncEnd', keep);
    }
    const [traced] = seen;
    if (seen.length !== 1 || traced.operation !== 'balance.retrieve' || traced.status !== 200 || !/^req_/.test(traced.requestId)) {
      throw new Error(`traced ${JSON.stringify(seen)}`);
    }
    return `requestId ${requestId}; traced ${traced.operation} ${traced.status}`;
  });

  const { secret, body, headers } = input.webhook;
  await step('verifyWebhook (good)', async () => {
    const event = await webhooks.verifyWebhook({ payload: body, headers, secret });
    if (event.type !== 'payment.completed') throw new Error(`type ${event.type}`);
    return event.type;
  });
  await step('verifyWebhook (tampered)', async () => {
    try {
      await webhooks.verifyWebhook({ payload: body.replace('"value":25', '"value":2500'), headers, secret });
    } catch (error) {
      if (error instanceof webhooks.WebhookVerificationError) return error.reason;
      throw error;
    }
    throw new Error('a tampered body verified');
  });
  await step('fulfillment (once, and a forged delivery)', async () => {
    const paid = [];
    const kit = fulfillment.createFulfillment({
      environment: 'sandbox',
      secret,
      client,
      store: fulfillment.memoryStore(),
      onPaid: (tx) => void paid.push(tx.trx_id),
    });
    const tx = { ...(await client.payments.verify(trx ?? 'none')), status: 'success' };
    const results = [await kit.handleVerified(tx), await kit.handleVerified(tx)];
    const forged = await kit.handleWebhook({ payload: body.replace('"value":25', '"value":2500'), headers });
    if (results.join() !== 'ran,done' || paid.length !== 1 || forged.status !== 401) {
      throw new Error(`results ${results}, onPaid ${paid.length}×, forged ${forged.status}`);
    }
    return 'ran, done, 401';
  });
  return { ok: steps.every((s) => s.ok), steps };
}
