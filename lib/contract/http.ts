/**
 * Transport-neutral request and response. Adapters (node:http, API Gateway) only translate to
 * and from these; every behaviour lives behind them, so what is tested locally is what deploys.
 */

export interface HttpRequest {
  readonly method: string;
  /** The path exactly as received, still percent-encoded (ids are form-decoded by the router). */
  readonly rawPath: string;
  /** The raw query string without the leading `?` (may be empty). */
  readonly rawQuery: string;
  /** Header names lower-cased; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body bytes; empty when none was sent. */
  readonly body: Buffer;
  /** Correlates logs and the error `instance`. */
  readonly requestId: string;
  /**
   * What the API Gateway authorizer established (its `context`), on AWS only. The guard takes
   * the caller from here and never re-parses the credential headers.
   */
  readonly authorizer?: Readonly<Record<string, string>>;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}
