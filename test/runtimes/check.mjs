// What every runtime of the matrix proves, with the packed tarball: a signed client call the
// sandbox accepts (create, then verify, typed results), an API error mapped to its class, the
// request id of a result and the trace of a call (where node:diagnostics_channel is), and
// verifyWebhook accepting a good delivery and refusing a tampered one, and the fulfillment kit
// settling a payment once and refusing a forged delivery, and the payout kit sending a payout
// intent once, and the billing kit subscribing a customer once (a second subscribe sends
// nothing) and granting access from an invoice.paid event. It takes the package's
// modules as arguments (imported, required or bundled by the runtime's own wrapper) and never
// throws: it resolves to { ok, steps } so every runtime reports the same way.
//
// `input`: { baseUrl, credentials: { merchantKey, apiKey, apiSecret }, webhook: { secret, body,
// headers }, browser?: boolean, earlier?: { baseUrl, credentials, control } }.
//
// With `input.earlier`, the same runtime then proves the earlier generation (checkEarlier below)
// against a sandbox playing it; its steps are named `earlier: …`.

export async function check(sdk, webhooks, input, fulfillment, payouts, billing) {
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
  await step('payouts (an intent sent once)', async () => {
    const kit = payouts.createPayouts({ client, store: payouts.memoryStore() });
    const key = `rt-${Math.random().toString(36).slice(2, 12)}`;
    const first = await kit.send({ key, amount: 10 });
    const again = await kit.send({ key, amount: 10 });
    if (first.state !== 'sent' || again.payoutId !== first.payoutId || again.sends !== 1) {
      throw new Error(`state ${first.state} (${first.error ?? ''}), again ${again.payoutId} after ${again.sends} sends`);
    }
    return `sent once (${first.payoutId})`;
  });
  await step('billing (one subscription, access from its paid invoice)', async () => {
    const kit = billing.createBilling({ client, store: billing.memoryStore() });
    const { plan_code } = await client.billing.plans.create({ name: 'Runtime', amount: 1000, currency: 'TZS', interval: 'month' });
    const params = {
      customer: `rt-${Math.random().toString(36).slice(2, 10)}`,
      plan_code,
      customer_phone: '0712 345 678',
      terms_shown: 'TZS 1,000 a month.',
    };
    const [first, again] = [await kit.subscribe(params), await kit.subscribe(params)];
    const subscription = first.record.subscriptionId;
    const now = Date.now();
    const invoice = {
      id: `inv_${subscription}`,
      subscription,
      status: 'paid',
      period_start: new Date(now - 1000).toISOString(),
      period_end: new Date(now + 86_400_000).toISOString(),
    };
    await kit.handleEvent({ id: `evt_${subscription}`, type: 'invoice.paid', data: { invoice } });
    const access = await kit.entitlement(params.customer, plan_code);
    if (!first.created || again.created || again.record.subscriptionId !== subscription || !access.active || access.state !== 'active') {
      throw new Error(
        `created ${first.created}/${again.created}, ${subscription} then ${again.record.subscriptionId}, access ${access.active} (${access.state})`,
      );
    }
    return `one subscription (${subscription}), active`;
  });
  if (input.earlier) await checkEarlier(sdk, webhooks, { ...input.earlier, browser: input.browser }, fulfillment, step);
  return { ok: steps.every((s) => s.ok), steps };
}

// The earlier generation (docs/generations.md), against a sandbox playing it: initiate (no
// trx_id in the answer), verify pending then success after the customer paid (the runner's
// mock.completeCheckout, which sends the IPN), payments.create → RouteNotSupportedError,
// client.generation() → 'earlier', verifyWebhook of the sandbox's own IPN (signed with the API
// secret) and of a tampered copy, and the fulfillment kit settling that IPN once.
//
// `earlier.control` is the runner's helper on 127.0.0.1 (CORS open): `POST /trx {ref}` gives
// the trx_id of a payment as the sandbox's records (the merchant's dashboard) show it, since
// initiate answers none; `POST /complete {trx_id}` runs mock.completeCheckout(trx_id, 'success')
// and answers the IPN the sandbox delivered to `<control>/ipn` ({ body, headers }).
async function checkEarlier(sdk, webhooks, earlier, fulfillment, step) {
  const options = { ...earlier.credentials, environment: 'sandbox', baseUrl: earlier.baseUrl, maxRetries: 0 };
  if (earlier.browser) options.dangerouslyAllowBrowser = true;
  const client = new sdk.PaymentsClient(options);
  const control = async (path, value) => {
    const response = await fetch(`${earlier.control}${path}`, { method: 'POST', body: JSON.stringify(value) });
    if (!response.ok) throw new Error(`the runner's ${path} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
    return response.json();
  };
  const ref = `matrix-earlier-${Date.now()}`;
  let trx;
  let ipn;
  await step('earlier: payments.initiate (no trx_id in the answer)', async () => {
    const session = await client.payments.initiate({
      payment_amount: 25,
      currency_code: 'USD',
      ref_trx: ref,
      description: 'Runtime matrix',
      customer_name: 'Zoë Mwinyi',
      ipn_url: `${earlier.control}/ipn`,
      success_redirect: 'https://shop.example.com/thanks',
      cancel_redirect: 'https://shop.example.com/cart',
    });
    if (typeof session.payment_url !== 'string' || session.data?.trx_id != null || session.info?.ref_trx !== ref)
      throw new Error(`unexpected session ${JSON.stringify(session)}`);
    trx = (await control('/trx', { ref })).trx_id;
    if (typeof trx !== 'string') throw new Error(`the sandbox has no payment ${ref}`);
    return `payment_url; ${trx} from the sandbox's records`;
  });
  await step('earlier: payments.verify (pending)', async () => {
    const verified = await client.payments.verify(trx ?? 'none');
    if (verified.status !== 'pending' || verified.trx_id !== trx || verified.amount !== undefined)
      throw new Error(`unexpected ${JSON.stringify(verified)}`);
    return `pending: ${verified.message}`;
  });
  await step('earlier: payments.verify (success, after mock.completeCheckout)', async () => {
    ipn = (await control('/complete', { trx_id: trx ?? 'none' })).ipn;
    const verified = await client.payments.verify(trx ?? 'none');
    // `amount` is the net there; paidAmount gives the gross the customer paid.
    if (verified.status !== 'success' || verified.amount !== verified.net_amount || sdk.paidAmount(verified) !== 25)
      throw new Error(`unexpected ${JSON.stringify(verified)}`);
    return `success: net ${verified.amount} + fee ${verified.fee} = paidAmount ${sdk.paidAmount(verified)} ${verified.currency}`;
  });
  await step('earlier: payments.create → RouteNotSupportedError', async () => {
    try {
      await client.payments.create({
        payment_amount: 25,
        currency_code: 'USD',
        ref_trx: `${ref}-create`,
        ipn_url: 'https://shop.example.com/ipn',
      });
    } catch (error) {
      if (error instanceof sdk.RouteNotSupportedError && error instanceof sdk.NotFoundError && error.status === 404) return error.name;
      throw error;
    }
    throw new Error('payments.create resolved on the earlier generation');
  });
  await step("earlier: client.generation() → 'earlier'", async () => {
    const generation = await client.generation();
    if (generation !== 'earlier') throw new Error(`generation() is ${generation}`);
    return generation;
  });
  await step("earlier: verifyWebhook of the sandbox's IPN (good, tampered)", async () => {
    if (!ipn) throw new Error('no IPN reached the runner');
    const { body, headers } = ipn;
    const secret = earlier.credentials.apiSecret;
    const event = await webhooks.verifyWebhook({ payload: body, headers, secret, environment: 'sandbox' });
    if (event.type !== 'payment.completed' || event.format !== 'legacy' || event.data.trx_id !== trx || event.data.merchant_ref !== ref)
      throw new Error(`unexpected event ${JSON.stringify(event)}`);
    try {
      await webhooks.verifyWebhook({ payload: body.replace('"amount":25', '"amount":2500'), headers, secret });
    } catch (error) {
      if (error instanceof webhooks.WebhookVerificationError) return `${event.type} (legacy); tampered: ${error.reason}`;
      throw error;
    }
    throw new Error('a tampered IPN verified');
  });
  await step('earlier: fulfillment (the IPN once, reconcile walks the store)', async () => {
    if (!ipn) throw new Error('no IPN reached the runner');
    const paid = [];
    const kit = fulfillment.createFulfillment({
      environment: 'sandbox',
      secret: earlier.credentials.apiSecret, // the earlier generation signs its IPN with the API secret
      client,
      store: fulfillment.memoryStore(),
      onPaid: (tx) => void paid.push(sdk.paidAmount(tx)),
    });
    const delivery = { payload: ipn.body, headers: ipn.headers };
    const answers = [await kit.handleWebhook(delivery), await kit.handleWebhook(delivery)].map(
      (a) => `${a.status} ${JSON.parse(a.body).result}`,
    );
    const report = await kit.reconcile({ since: 0, olderThan: 0 });
    if (answers.join() !== '200 ran,200 done' || paid.join() !== '25' || report.walked !== 'store' || report.errors.length)
      throw new Error(`answers ${answers}, onPaid ${JSON.stringify(paid)}, reconcile ${JSON.stringify(report)}`);
    return `${answers.join(', ')}; reconcile walked the store`;
  });
}
