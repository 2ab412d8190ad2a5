import type { Construct } from 'constructs';

/**
 * CDK feature flags the constructs rely on. They are set on the constructs themselves
 * (`useFeatureFlags`), not only on the app: a team's own app, which sets none of them, must get
 * the same template as `cdk synth` here (issue #29).
 */
export const FEATURE_FLAGS: Readonly<Record<string, boolean>> = {
  // Server access logs are delivered through a bucket policy, not ACLs (the buckets enforce
  // bucket-owner object ownership, which disables ACLs). Without it CDK asks for an ACL on the
  // log bucket and the synth fails.
  '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy': true,
  // A layer change publishes a new function version.
  '@aws-cdk/aws-lambda:recognizeLayerVersion': true,
};

/**
 * Sets FEATURE_FLAGS as context on `scope`, which must have no children yet: CDK reads a flag
 * from the nearest node that sets it, so the construct's subtree sees these values whatever the
 * enclosing app says.
 */
export function useFeatureFlags(scope: Construct): void {
  for (const [flag, value] of Object.entries(FEATURE_FLAGS)) scope.node.setContext(flag, value);
}
