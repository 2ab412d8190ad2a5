import { S3Client } from '@aws-sdk/client-s3';
import { s3ClientConfig } from '../adapters/aws/s3-client.js';
import type { AwsConfig } from '../config.js';

/**
 * The S3 client of the AWS functions, with the budgets of the configuration (RASK_S3_*: retry
 * mode, attempts, connection and request timeouts; docs/deploy.md, "S3 budgets").
 */
export function createS3Client(config: AwsConfig): S3Client {
  return new S3Client(
    s3ClientConfig(
      {
        retryMode: config.RASK_S3_RETRY_MODE,
        maxAttempts: config.RASK_S3_MAX_ATTEMPTS,
        connectionTimeoutMs: config.RASK_S3_CONNECTION_TIMEOUT_MS,
        requestTimeoutMs: config.RASK_S3_REQUEST_TIMEOUT_MS,
      },
      config.AWS_REGION,
    ),
  );
}
