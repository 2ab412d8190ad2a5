import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { RaskConfig } from '../config.js';

export interface StorageProps {
  readonly config: RaskConfig;
}

/**
 * The catalog's buckets.
 *
 * - The registry bucket holds the registry (JSON records under `registryPrefix`). It is always
 *   created by the stack and is never a warehouse, so no vended credential can reach it — the
 *   vending role's permissions name only the warehouse prefix, and the registry bucket policy
 *   denies that role outright as a second line.
 * - The warehouse bucket holds table data under `warehousePrefix`; it is created here unless an
 *   existing bucket is named in the configuration.
 * - A log bucket receives S3 server access logs of both.
 *
 * Versioning decision (also in docs/deploy.md):
 * - registry: ON, noncurrent versions kept 30 days. The registry is the catalog's only
 *   database; versioning makes a bad overwrite or delete (a bug, an operator) recoverable.
 *   Records are small, so the noncurrent copies cost next to nothing. Conditional writes
 *   (If-None-Match / If-Match) act on the current version and work unchanged.
 * - warehouse: ON by default, noncurrent versions kept as long as the trash grace (at least a
 *   day): a purged table (a bug, an operator, a grace of 0) stays recoverable from S3 for that
 *   long, and compaction and cleanup reclaim their bytes no later than a dropped table's would be.
 *   `rask:warehouseVersioning=false` turns it off. (docs/deploy.md, "Storage and IAM decisions")
 */
/** How long the warehouse keeps a replaced or deleted object's bytes: the trash grace, at least a day. */
export const warehouseNoncurrentDays = (config: Pick<RaskConfig, 'trashGraceDays'>): number => Math.max(1, config.trashGraceDays);

export class Storage extends Construct {
  readonly registryBucket: s3.Bucket;
  readonly warehouseBucket: s3.IBucket;
  /** The warehouse bucket when this stack created it (hygiene settings apply only then). */
  readonly ownedWarehouseBucket?: s3.Bucket;
  readonly logBucket: s3.Bucket;
  readonly registryPrefix: string;
  readonly warehousePrefix: string;

  constructor(scope: Construct, id: string, props: StorageProps) {
    super(scope, id);
    const { config } = props;
    this.registryPrefix = config.registryPrefix;
    this.warehousePrefix = config.warehousePrefix;
    const removalPolicy = config.removalPolicy;

    this.logBucket = new s3.Bucket(this, 'AccessLogs', {
      ...hygiene(removalPolicy),
      // Server access log delivery supports SSE-S3 only (not SSE-KMS) on the target bucket.
      encryption: s3.BucketEncryption.S3_MANAGED,
      lifecycleRules: [
        { id: 'expire-access-logs', expiration: Duration.days(config.logRetentionDays) },
        { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
    // No AwsSolutions-S1 finding here: cdk-nag recognises a bucket that receives access logs.

    this.registryBucket = new s3.Bucket(this, 'Registry', {
      ...hygiene(removalPolicy),
      versioned: true,
      serverAccessLogsBucket: this.logBucket,
      serverAccessLogsPrefix: 'registry-bucket/',
      lifecycleRules: [
        { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        {
          id: 'expire-noncurrent-registry-versions',
          // `rask:registryNoncurrentDays` (default 30): how far back `rask registry restore` reaches.
          noncurrentVersionExpiration: Duration.days(config.registryNoncurrentDays),
          // Deletes leave markers; expiring lone markers keeps LIST pages (one per request) dense.
          expiredObjectDeleteMarker: true,
        },
        {
          // Idempotency keys (lib/registry/idempotency-records.ts) are dead after their window
          // (RASK_IDEMPOTENCY_TTL_SECONDS, at most 30 days): S3 removes them a day past the longest.
          id: 'expire-idempotency-keys',
          prefix: `${config.registryPrefix}idem/`,
          expiration: Duration.days(31),
        },
      ],
    });

    if (config.warehouseBucketName) {
      this.warehouseBucket = s3.Bucket.fromBucketName(this, 'Warehouse', config.warehouseBucketName);
    } else {
      const versioned = config.warehouseVersioning;
      this.ownedWarehouseBucket = new s3.Bucket(this, 'Warehouse', {
        ...hygiene(removalPolicy),
        versioned,
        serverAccessLogsBucket: this.logBucket,
        serverAccessLogsPrefix: 'warehouse-bucket/',
        lifecycleRules: [
          // Lance writes large data files with multipart uploads; a crashed writer leaves
          // invisible, billed parts behind unless they are aborted.
          { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
          ...(versioned
            ? [{ id: 'expire-noncurrent-versions', noncurrentVersionExpiration: Duration.days(warehouseNoncurrentDays(config)), expiredObjectDeleteMarker: true }]
            : []),
        ],
      });
      this.warehouseBucket = this.ownedWarehouseBucket;
    }
  }

  /** Every object under the registry prefix (for IAM resources). */
  registryObjectsArn(): string {
    return this.registryBucket.arnForObjects(`${this.registryPrefix}*`);
  }

  /** Every object under the warehouse prefix: the widest thing credentials can be vended for. */
  warehouseObjectsArn(): string {
    return this.warehouseBucket.arnForObjects(`${this.warehousePrefix}*`);
  }
}

/** Settings every stack-owned bucket gets. */
function hygiene(removalPolicy: RemovalPolicy): s3.BucketProps {
  return {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    removalPolicy,
    // Emptying a data bucket is never automatic: a deleted stack must not take tables with it.
    autoDeleteObjects: false,
  };
}
