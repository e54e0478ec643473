// What a kit needs of the client beside its resources, declared once: PaymentsClient implements
// it (its members are `@internal` there), and each kit's client interface (FulfillmentClient,
// PayoutsClient) declares the members it uses as optional, so a test's fake client may omit them
// (its calls are then not paced, its warn lines dropped, no error of it read as a refusal).
// test/core/kit-client.test.ts checks, at the type level, that the three agree. Not exported from
// the package, and referenced by no public type (its members are declared in the kits' own).

/** What the kits need of a `PaymentsClient` beside its resources (pass the client itself). */
export interface KitClient {
  /**
   * Resolves when the SDK may send one request on its own within the client's polling budget
   * (`pollingBudget`), and counts it; rejects when `signal` aborts.
   */
  pollSlot?(signal?: AbortSignal): Promise<void>;
  /** Writes `line` to the client's logger at warn. */
  warn?(line: string): void;
  /** Whether `error` is the client refusing a call's params before sending anything (`InvalidParamsError`). */
  refused?(error: unknown): boolean;
  /** Whether `error` says the server's generation has no such route (`RouteNotSupportedError`). */
  unsupported?(error: unknown): boolean;
}
