// A payment.completed event exactly as the spec's payload table shows it, shared by the
// webhook, CLI and example tests. `overrides` replace top-level fields.
export function paymentEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'evt_01HV8Q2ZK3',
    type: 'payment.completed',
    api_version: '2024-06-01',
    created_at: '2023-11-14T22:13:20+00:00',
    data: {
      trx_id: 'TRX123456',
      merchant_ref: 'order-42',
      status: 'completed',
      amount: { value: 1500, currency: 'TZS' },
      settlement: {
        gross: { value: 1500, currency: 'TZS' },
        fees: { value: 45, currency: 'TZS' },
        net: { value: 1455, currency: 'TZS' },
      },
      customer: { name: 'Asha Mwinyi', email: 'asha@example.com', phone: '255700000001' },
      environment: 'sandbox',
    },
    ...overrides,
  };
}
