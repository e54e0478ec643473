import { requestIdOf } from './error.js';

/** A result together with the raw HTTP response it came from. */
export interface WithResponse<T> {
  /** The parsed, validated result. */
  data: T;
  /** The final attempt's `Response` (its body has already been read). */
  response: Response;
  /** The service's id for this request (`x-request-id`, `request-id` or `x-correlation-id`), when it sent one. */
  requestId: string | undefined;
}

/** @internal What the pipeline hands an APIPromise: the response, and how to read its body. */
export interface SentRequest<T> {
  /** The final attempt's response, its body unread. */
  response: Response;
  /** Reads, parses and validates the body (once). */
  parse: () => Promise<T>;
}

/** @internal Set by the transport's call, marked by the promise once its data is asked for (`then`, `withResponse`). */
export interface DataRequest {
  asked?: boolean;
}

/**
 * The promise every client method returns: await it for the typed result, call
 * `.withResponse()` for `{ data, response }` (status, headers), or `.asResponse()` for the
 * raw `Response`, unread and unparsed (the escape hatch when a shape surprises you).
 *
 * The request is sent at once; the body is read and validated only when you ask for data.
 *
 * @example
 * ```ts
 * const { data, response } = await client.balance.retrieve().withResponse();
 * console.log(response.status, data);
 *
 * const raw = await client.payments.verify(trxId).asResponse();
 * console.log(raw.headers.get('content-type'), await raw.text());
 * ```
 */
export class APIPromise<T> extends Promise<T> {
  /** @internal Derived promises (`then`, `catch`) are plain Promises. */
  // Promise subclasses must not let `then` build another APIPromise around an executor.
  static override get [Symbol.species]() {
    return Promise;
  }

  readonly #sent: Promise<SentRequest<T>>;
  readonly #dataRequest: DataRequest | undefined;
  #parsed: Promise<WithResponse<T>> | undefined;
  #data: Promise<T> | undefined;

  /**
   * @internal Users get instances from client methods. `dataRequest.asked` is set as soon as data
   * is asked for, so a traced call can include reading the body.
   */
  constructor(sent: Promise<SentRequest<T>>, dataRequest?: DataRequest) {
    super((resolve) => resolve(undefined as T));
    this.#sent = sent;
    this.#dataRequest = dataRequest;
  }

  /**
   * Resolves to the raw `Response`; the SDK neither reads nor parses its body. It is the same
   * body the data comes from: read one or the other (`withResponse()` gives both).
   */
  asResponse(): Promise<Response> {
    return this.#sent.then((sent) => sent.response);
  }

  /** Resolves to `{ data, response }` instead of the bare data. */
  withResponse(): Promise<WithResponse<T>> {
    if (this.#dataRequest) this.#dataRequest.asked = true;
    this.#parsed ??= this.#sent.then(async ({ response, parse }) => ({
      data: await this.#read(parse),
      response,
      requestId: requestIdOf(response.headers),
    }));
    return this.#parsed;
  }

  // The body is read once, whichever of `then` and `withResponse` asks first.
  #read(parse: () => Promise<T>): Promise<T> {
    this.#data ??= parse();
    return this.#data;
  }

  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    if (this.#dataRequest) this.#dataRequest.asked = true;
    return this.#sent.then((sent) => this.#read(sent.parse)).then(onfulfilled, onrejected);
  }

  override catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.then(undefined, onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.then().finally(onfinally);
  }
}
