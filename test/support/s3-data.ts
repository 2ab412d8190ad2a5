import type { AwsHttpFake } from './aws-http-fake.js';

/** LanceDB storage options for `principal` against the loopback AWS fake's S3. */
export function fakeS3StorageOptions(s3: AwsHttpFake, principal: string): Record<string, string> {
  const key = s3.principal(principal);
  return {
    aws_access_key_id: key.accessKeyId,
    aws_secret_access_key: key.secretAccessKey,
    aws_region: 'us-east-1',
    aws_endpoint: s3.endpoint,
    allow_http: 'true',
    aws_virtual_hosted_style_request: 'false',
  };
}

/** The S3 requests `f` makes, by IAM action (e.g. `s3:ListBucket`). */
export async function s3Requests(s3: AwsHttpFake, f: () => Promise<unknown>): Promise<Record<string, number>> {
  const from = s3.calls.length;
  await f();
  const by: Record<string, number> = {};
  for (const c of s3.calls.slice(from)) by[c.action] = (by[c.action] ?? 0) + 1;
  return by;
}

export const totalRequests = (by: Record<string, number>) => Object.values(by).reduce((a, b) => a + b, 0);
