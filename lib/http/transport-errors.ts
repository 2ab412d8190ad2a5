import { CatalogError, ErrorCode } from '../errors.js';

/**
 * Failures of the transport itself (no such route, wrong verb, body too large). They carry a
 * spec code like every other error (the client reads only the code) but keep the HTTP status
 * that generic HTTP tooling expects; domain errors never pick their status.
 */
export class TransportError extends CatalogError {
  constructor(
    code: (typeof ErrorCode)[keyof typeof ErrorCode],
    private readonly httpStatus: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(code, message);
    this.name = 'TransportError';
  }

  override get status(): number {
    return this.httpStatus;
  }
}

export const routeNotFound = (method: string, path: string) =>
  new TransportError(ErrorCode.Unsupported, 404, `no operation at ${method} ${path}`);

export const methodNotAllowed = (method: string, path: string, allowed: readonly string[]) =>
  new TransportError(ErrorCode.InvalidInput, 405, `${method} is not allowed on ${path}; use ${allowed.join(' or ')}`, {
    allow: allowed.join(', '),
  });

export const payloadTooLarge = (size: number, limit: number) =>
  new TransportError(
    ErrorCode.InvalidInput,
    413,
    // A synchronous Lambda request carries at most 6 MB (Arrow travels base64-encoded, so about
    // 4.4 MB of it): bulk data cannot go through the API, it goes straight to storage.
    `request body of ${size} bytes exceeds the ${limit}-byte limit; for larger writes, declare the table and write directly with vended credentials (DeclareTable or DescribeTable returns the location and storage_options)`,
  );

/** Too many request bodies are buffered at once; the client should come back shortly. */
export const serverBusy = (limit: number) =>
  new TransportError(
    ErrorCode.ServiceUnavailable,
    503,
    `the server is buffering its limit of ${limit} request-body bytes; retry shortly`,
    { 'retry-after': '1' },
  );
