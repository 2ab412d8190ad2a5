import type { S3ClientConfig } from '@aws-sdk/client-s3';

/**
 * The S3 client's budgets, explicit rather than the SDK's defaults (no timeouts at all, retries
 * from AWS_MAX_ATTEMPTS / AWS_RETRY_MODE if set). Chosen so that a door finishes or answers
 * 503 within its deadline under API Gateway's 29 s; the arithmetic per door is in docs/deploy.md
 * ("S3 budgets"). Values come from lib/config.ts (RASK_S3_*).
 */
export interface S3ClientSettings {
  /** The SDK's retry mode: `standard` (exponential backoff with jitter, a retry quota) or `adaptive` (plus client-side rate limiting). */
  readonly retryMode: 'standard' | 'adaptive';
  /** Attempts per request, the first included (1 = no SDK retries). */
  readonly maxAttempts: number;
  /** Time to establish a connection (TCP + TLS) before the attempt fails with TimeoutError. */
  readonly connectionTimeoutMs: number;
  /** Time one attempt may take, request and response, before it fails with TimeoutError. */
  readonly requestTimeoutMs: number;
}

/** The client configuration for `settings` (region and credentials as the environment gives them). */
export function s3ClientConfig(settings: S3ClientSettings, region?: string): S3ClientConfig {
  return {
    ...(region ? { region } : {}),
    retryMode: settings.retryMode,
    maxAttempts: settings.maxAttempts,
    requestHandler: {
      connectionTimeout: settings.connectionTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      // Without it an exceeded requestTimeout is only logged and the attempt keeps waiting.
      throwOnRequestTimeout: true,
    },
  };
}
