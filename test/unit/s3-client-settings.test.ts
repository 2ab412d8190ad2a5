/**
 * The S3 client's budgets (issue #35; docs/deploy.md, "S3 budgets"): explicit defaults, every
 * one overridable from the environment and validated at start-up, and what the client built by
 * lib/app/aws-s3.ts really runs with.
 */
import { describe, expect, it } from 'vitest';
import { createS3Client } from '../../lib/app/aws-s3.js';
import { DEFAULT_S3_SETTINGS, loadAwsConfig } from '../../lib/config.js';

const base = { RASK_REGISTRY_BUCKET: 'reg', RASK_WAREHOUSE_BUCKET: 'wh-b', AWS_REGION: 'us-east-1' };

/** What the client's request handler was configured with. */
async function handlerSettings(client: ReturnType<typeof createS3Client>) {
  const handler = client.config.requestHandler as unknown as { configProvider: Promise<Record<string, unknown>> };
  return handler.configProvider;
}

/** The mode of the retry strategy the client resolved (the SDK's strategies name it). */
async function retryMode(client: ReturnType<typeof createS3Client>) {
  return ((await client.config.retryStrategy()) as { mode?: string }).mode;
}

describe('S3 client settings (RASK_S3_*)', () => {
  it('defaults to standard retries, 3 attempts, 1 s to connect and 5 s per attempt, which the client really uses', async () => {
    const config = loadAwsConfig(base);
    expect(config).toMatchObject(DEFAULT_S3_SETTINGS);
    const client = createS3Client(config);
    expect(await client.config.maxAttempts()).toBe(3);
    expect(await retryMode(client)).toBe('standard');
    expect(await handlerSettings(client)).toMatchObject({ connectionTimeout: 1000, requestTimeout: 5000, throwOnRequestTimeout: true });
    client.destroy();
  });

  it('takes each from the environment, and the explicit setting wins over AWS_MAX_ATTEMPTS', async () => {
    const config = loadAwsConfig({
      ...base,
      RASK_S3_RETRY_MODE: 'adaptive',
      RASK_S3_MAX_ATTEMPTS: '1',
      RASK_S3_CONNECTION_TIMEOUT_MS: '250',
      RASK_S3_REQUEST_TIMEOUT_MS: '2000',
      RASK_S3_CONFLICT_ATTEMPTS: '2',
      AWS_MAX_ATTEMPTS: '7',
    });
    expect(config.RASK_S3_CONFLICT_ATTEMPTS).toBe(2);
    const client = createS3Client(config);
    expect(await client.config.maxAttempts()).toBe(1);
    expect(await retryMode(client)).toBe('adaptive');
    expect(await handlerSettings(client)).toMatchObject({ connectionTimeout: 250, requestTimeout: 2000 });
    client.destroy();
  });

  it('refuses values that would break a door`s budget, naming the variable', () => {
    expect(() => loadAwsConfig({ ...base, RASK_S3_MAX_ATTEMPTS: '0' })).toThrow('RASK_S3_MAX_ATTEMPTS: must be at least 1');
    expect(() => loadAwsConfig({ ...base, RASK_S3_REQUEST_TIMEOUT_MS: '60000' })).toThrow('RASK_S3_REQUEST_TIMEOUT_MS: must be at most 28000');
    expect(() => loadAwsConfig({ ...base, RASK_S3_RETRY_MODE: 'legacy' })).toThrow('RASK_S3_RETRY_MODE: must be standard or adaptive');
    expect(() => loadAwsConfig({ ...base, RASK_S3_CONNECTION_TIMEOUT_MS: 'soon' })).toThrow('RASK_S3_CONNECTION_TIMEOUT_MS: must be a whole number');
  });
});
