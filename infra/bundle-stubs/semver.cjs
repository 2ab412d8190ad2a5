// What the Lambda bundles carry instead of `semver` (infra/bundling.ts, BUNDLE_ALIASES; issue #37).
// Its one importer in any bundle is aws-xray-sdk-core's AWS SDK v2 patcher (patchers/aws_p.js),
// which calls `semver.gte` only inside `captureAWS`, to check the v2 SDK's version. rask uses
// SDK v3 only (Tracer.captureAWSv3Client, lib/observability/lambda.ts), so that check never
// runs; loading semver cost every cold start ~30 KiB of code and its ~40 regular expressions.
// Should v2 capture ever be called, it fails here, loudly, instead of passing unchecked.
'use strict';
module.exports = {
  gte() {
    throw new Error('semver is not bundled: X-Ray capture of the AWS SDK v2 (captureAWS) is not supported in rask functions (infra/bundle-stubs/semver.cjs)');
  },
};
