import * as z from 'zod/mini';
import type { Schema } from '../internal/fields.js';

/** The service's OpenAPI description (an OpenAPI 3.1 document; the server's to describe). */
export interface OpenAPIDocument {
  /** OpenAPI version, e.g. `3.1.0`. */
  openapi?: string | undefined;
  /** Title, version and description of the API. */
  info?: Record<string, unknown> | undefined;
  /** Every route, by path. */
  paths?: Record<string, unknown> | undefined;
  /** Shared schemas, responses and security schemes. */
  components?: Record<string, unknown> | undefined;
}

// The document's contents are the server's to describe: any JSON object is accepted.
/** The service's OpenAPI description (GET /api/v1/openapi.json). */
export const OpenAPIDocument: Schema<OpenAPIDocument> = z.looseObject({});
