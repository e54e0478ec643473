/** A result together with the raw HTTP response it came from. */
export interface WithResponse<T> {
  /** The parsed, validated result. */
  data: T;
  /** The final attempt's `Response` (its body has already been read). */
  response: Response;
}

/**
 * The promise every client method returns: await it for the typed result, or call
 * `.withResponse()` for `{ data, response }` (status, headers, request id).
 *
 * @example
 * ```ts
 * const { data, response } = await client.balance.retrieve().withResponse();
 * console.log(response.status, data);
 * ```
 */
export class APIPromise<T> extends Promise<T> {
  /** @internal Derived promises (`then`, `catch`) are plain Promises. */
  // Promise subclasses must not let `then` build another APIPromise around an executor.
  static override get [Symbol.species]() {
    return Promise;
  }

  readonly #result: Promise<WithResponse<T>>;
  #data: Promise<T> | undefined;

  /** @internal Wraps the pipeline's promise; users get instances from client methods. */
  constructor(result: Promise<WithResponse<T>>) {
    super((resolve) => resolve(undefined as T));
    this.#result = result;
  }

  /** Resolves to `{ data, response }` instead of the bare data. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#result;
  }

  #parsed(): Promise<T> {
    this.#data ??= this.#result.then((r) => r.data);
    return this.#data;
  }

  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#parsed().then(onfulfilled, onrejected);
  }

  override catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#parsed().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#parsed().finally(onfinally);
  }
}
