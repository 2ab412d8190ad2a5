import { InternalError } from '../../errors.js';
import { type AccessMode, iamPatternIn } from '../../ports/credential-vendor.js';

/**
 * The inline session policy that narrows the vending role to one table's prefix. Effective
 * permissions are role policy ∩ session policy, so even a role granted the whole warehouse hands
 * out credentials that reach one table only. The actions are what Lance needs
 * (serverless-constraints.md §6.2): it commits with `If-None-Match: *` PUTs, so PutObject is
 * enough to write, and it lists `_versions/` and data directories under the table's prefix.
 */

export interface PolicyScope {
  readonly bucket: string;
  /** The table's key prefix inside the bucket, without a trailing `/`. */
  readonly prefix: string;
  readonly mode: AccessMode;
  /** `aws`, `aws-cn` or `aws-us-gov`. */
  readonly partition: string;
}

/** STS refuses an inline session policy longer than this (plaintext characters). */
export const MAX_POLICY_CHARS = 2048;

export function sessionPolicy(scope: PolicyScope): string {
  // Backstop: locations are checked where callers supply them (RegisterTable), but a warehouse
  // root or any future path reaches here too, and a wildcard would widen the grant silently.
  for (const [what, value] of [['bucket', scope.bucket], ['prefix', scope.prefix]] as const) {
    const found = iamPatternIn(value);
    if (found !== undefined) {
      throw new InternalError(
        `refusing to vend credentials: the table's ${what} contains ${JSON.stringify(found)}, an IAM wildcard or variable, which would widen the session policy beyond the table`,
      );
    }
  }
  const bucketArn = `arn:${scope.partition}:s3:::${scope.bucket}`;
  const objects = `${bucketArn}/${scope.prefix}/*`;
  const statements: object[] = [
    { Sid: 'ReadTable', Effect: 'Allow', Action: ['s3:GetObject', 's3:GetObjectVersion'], Resource: objects },
  ];
  if (scope.mode === 'readwrite') {
    statements.push({
      Sid: 'WriteTable',
      Effect: 'Allow',
      Action: ['s3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'],
      Resource: objects,
    });
  }
  statements.push(
    {
      Sid: 'ListTable',
      Effect: 'Allow',
      Action: 's3:ListBucket',
      Resource: bucketArn,
      // Both forms: the table directory itself and everything below it, nothing beside it
      // (a sibling `t.lance2/` must not match, hence the `/` before the wildcard).
      Condition: { StringLike: { 's3:prefix': [scope.prefix, `${scope.prefix}/*`] } },
    },
    { Sid: 'LocateBucket', Effect: 'Allow', Action: 's3:GetBucketLocation', Resource: bucketArn },
  );
  const policy = JSON.stringify({ Version: '2012-10-17', Statement: statements });
  if (policy.length > MAX_POLICY_CHARS) {
    throw new Error(
      `the session policy for ${scope.prefix} is ${policy.length} characters; STS accepts ${MAX_POLICY_CHARS}. Shorten the warehouse prefix`,
    );
  }
  return policy;
}

/** The ARN partition a region belongs to. */
export function partitionOf(region: string | undefined): string {
  if (region?.startsWith('cn-')) return 'aws-cn';
  if (region?.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
}
