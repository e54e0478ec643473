import * as z from 'zod';

// The document's contents are the server's to describe: any JSON object is accepted.
/** The service's OpenAPI description (GET /api/v1/openapi.json). */
export const OpenAPIDocument = z.looseObject({});
/** The service's OpenAPI description. */
export type OpenAPIDocument = z.infer<typeof OpenAPIDocument>;
