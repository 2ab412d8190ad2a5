import { objectChangeLog } from '../adapters/aws/object-change-log.js';
import type { S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore } from '../adapters/aws/s3-object-store.js';
import type { CatalogServices } from '../catalog/services.js';
import { credentialQuotasOf, quotaDefaultsOf, rateLimitsOf, requestLimitsOf, type AwsConfig } from '../config.js';
import type { ErrorLogger } from '../http/respond.js';
import type { ObjectStore } from '../ports/object-store.js';
import type { StorageRoot } from '../ports/storage-root.js';
import type { RateBucketStore } from '../ports/rate-buckets.js';
import { noCredentials, type CredentialVendor } from '../ports/credential-vendor.js';
import { awsJobSettings } from './aws-jobs.js';
import { createS3Client } from './aws-s3.js';
import { lazyPort } from '../ports/lazy.js';
import type { BuildOptions } from './build.js';
import { buildServices, consoleLogger, type DataPlane, decisionLog } from './services-build.js';
import { logPublisher } from '../ports/event-publisher.js';
import { awsStorage } from './storage.js';

/**
 * The AWS composition's options (registry and default warehouse in S3), all but the handlers:
 * createAwsApp (lib/app/aws.ts) builds a router from them, createAwsServices only the services.
 */
export function awsOptions(config: AwsConfig, client?: S3Client, dataPlane: DataPlane = {}, observe: AwsObservation = {}): Omit<BuildOptions, 'handlers'> {
  const instrument = observe.instrument ?? (<T>(c: T) => c);
  const logger = observe.logger ?? consoleLogger;
  const s3 = client ?? instrument(createS3Client(config));
  const conflictAttempts = config.RASK_S3_CONFLICT_ATTEMPTS;
  const stores = new Map<string, ObjectStore>();
  const storageFor = (root: StorageRoot): ObjectStore => {
    if (root.kind !== 's3') throw new Error(`the AWS deployment only has S3 storage, not ${root.kind}`);
    const id = `${root.bucket}/${root.prefix}`;
    const cached = stores.get(id);
    if (cached) return cached;
    const store = new S3ObjectStore({ client: s3, bucket: root.bucket, prefix: root.prefix, conflictAttempts });
    stores.set(id, store);
    return store;
  };
  const { reservedRoots, warehouseRoot, storageRoots } = awsStorage(config);
  const registryStore = new S3ObjectStore({ client: s3, bucket: config.RASK_REGISTRY_BUCKET, prefix: config.RASK_REGISTRY_PREFIX, conflictAttempts });
  const changes = objectChangeLog({ store: registryStore, retentionDays: config.RASK_CHANGES_RETENTION_DAYS });
  return {
    registryStore,
    // One log in the registry bucket: the doors append to it, the feed pages it, and the relay
    // (functions/change-relay.ts) takes it to the bus; no answer waits for EventBridge (docs/events.md, "Delivery").
    changes,
    storageFor,
    project: config.RASK_PROJECT,
    warehouse: config.RASK_WAREHOUSE,
    warehouseRoot,
    managedVersioning: config.RASK_MANAGED_VERSIONING,
    trashGraceDays: config.RASK_TRASH_GRACE_DAYS,
    vendor: vendorFor(config, instrument),
    inspector: dataPlane.inspector,
    data: dataPlane.engine,
    maxBodyBytes: config.RASK_MAX_BODY_BYTES,
    requestLimits: requestLimitsOf(config),
    commitDeadlineMs: config.RASK_COMMIT_DEADLINE_MS,
    idempotencyTtlSeconds: config.RASK_IDEMPOTENCY_TTL_SECONDS,
    rateLimits: rateLimitsOf(config),
    ...(config.RASK_WORK_QUEUE_TABLE ? { rateBuckets: sharedRateBuckets(config.RASK_WORK_QUEUE_TABLE, config.AWS_REGION) } : {}),
    quotas: quotaDefaultsOf(config),
    credentialQuotas: credentialQuotasOf(config),
    events: logPublisher(changes, (message, fields) => logger.error(message, fields)),
    dataLimits: {
      maxResultBytes: config.RASK_MAX_RESULT_BYTES,
      maxSyncVectorIndexRows: config.RASK_MAX_SYNC_VECTOR_INDEX_ROWS,
    },
    logger,
    traceRequests: config.RASK_LOG_LEVEL === 'debug',
    jobs: awsJobSettings(config),
    // API Gateway's authorizer authenticates; the guard authorizes from its context.
    // (No token verifier here: jose stays out of the function bundles.) Decisions go through the
    // function's logger, so they carry its request ids and obey RASK_LOG_LEVEL.
    auth: {
      mode: 'authorizer',
      log: decisionLog(logger),
    },
    reservedRoots,
    storage: { roots: storageRoots },
    readOnly: config.RASK_READ_ONLY,
  };
}

/**
 * The AWS composition's services without a router: the jobs function serves no request, so its
 * bundle carries neither the request guard nor the policy engine (test/infra/bundle.test.ts).
 * Built once per container, like createAwsApp.
 */
export async function createAwsServices(config: AwsConfig, client?: S3Client, dataPlane: DataPlane = {}, observe: AwsObservation = {}): Promise<CatalogServices> {
  return buildServices(awsOptions(config, client, dataPlane, observe));
}

/**
 * Rate buckets shared by every container (lib/http/shared-rate-limit.ts) on the work-queue table
 * the stack gives every API function. The DynamoDB client loads on the first limited request, so
 * a deployment without rate limits never loads it.
 */
function sharedRateBuckets(tableName: string, region: string | undefined): RateBucketStore {
  let store: Promise<RateBucketStore> | undefined;
  const load = async (): Promise<RateBucketStore> => {
    const { DynamoDBClient, DynamoRateBuckets } = await import('../adapters/aws/dynamo-rate-buckets.js');
    return new DynamoRateBuckets({ client: new DynamoDBClient({ region }), tableName });
  };
  return {
    take: async (...args) => {
      // A failed load is tried again on a later request (the limiter falls back meanwhile).
      store ??= load().catch((err: unknown) => {
        store = undefined;
        throw err;
      });
      return (await store).take(...args);
    },
  };
}

/** How the Lambda entries observe the app: their logger, and X-Ray around each AWS client. */
export interface AwsObservation {
  readonly logger?: ErrorLogger;
  readonly instrument?: <T>(client: T) => T;
}

/**
 * STS vending when RASK_VENDING_ROLE_ARN is set (the stack always sets it). Without it nothing is
 * vended: declare/describe omit `storage_options` and clients must bring their own S3
 * access to the warehouse (docs/credential-vending.md). The STS client is loaded by the first
 * vend (namespace and listing requests never need it).
 */
function vendorFor(config: AwsConfig, instrument: <T>(client: T) => T): CredentialVendor {
  const roleArn = config.RASK_VENDING_ROLE_ARN;
  if (!roleArn) return noCredentials;
  return lazyPort<CredentialVendor>(async () => {
    const { STSClient, StsCredentialVendor } = await import('../adapters/aws/sts-vendor.js');
    return new StsCredentialVendor({ client: instrument(new STSClient({ region: config.AWS_REGION })), roleArn, region: config.AWS_REGION });
  }, { vend: true });
}

