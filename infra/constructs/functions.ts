import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { NATIVE_ALLOCATOR_ENV } from '../../lib/config.js';
import type { RaskConfig } from '../config.js';
import { LAYER_ARCHITECTURE, LanceDbLayer } from './lancedb-layer.js';
import { grantPrefixes } from './permissions.js';
import { RaskFunction } from './rask-function.js';
import type { StateRefs, StorageRefs } from '../state-stack.js';
import { WORK_QUEUE_SCHEMA } from './queue.js';
import { VendingRole } from './vending-role.js';

/**
 * What every catalog function reads through lib/config.ts (loadAwsConfig): where the registry
 * and the default warehouse are, and the default warehouse's settings. One place, so the API,
 * jobs and maintenance functions cannot disagree about the contract.
 */
export function catalogEnvironment(config: RaskConfig, storage: StorageRefs): Record<string, string> {
  return {
    RASK_REGISTRY_BUCKET: storage.registryBucket.bucketName,
    RASK_REGISTRY_PREFIX: storage.registryPrefix,
    RASK_WAREHOUSE_BUCKET: storage.warehouseBucket.bucketName,
    RASK_WAREHOUSE_PREFIX: storage.warehousePrefix,
    RASK_MANAGED_VERSIONING: String(config.managedVersioning),
    RASK_TRASH_GRACE_DAYS: String(config.trashGraceDays),
    RASK_PROJECT: config.project,
    RASK_WAREHOUSE: config.warehouse,
    // glibc's allocator settings for LanceDB's threads (lib/config.ts; docs/operations.md, "Memory").
    ...NATIVE_ALLOCATOR_ENV,
    // The declared storage (docs/governance.md, "Storage allotment"), inside the warehouse prefix.
    ...(config.storagePrefixes
      ? { RASK_STORAGE_ROOTS: config.storagePrefixes.map((p) => `s3://${storage.warehouseBucket.bucketName}/${storage.warehousePrefix}${p}`).join(',') }
      : {}),
    ...limitsEnvironment(config),
  };
}

/**
 * The deployment's rate limits and object quotas (`rask:rate*`, `rask:quota*`) as the functions
 * read them (lib/config.ts, RASK_RATE_* and RASK_QUOTA_*); a setting left at its default (off) is
 * not written, so the default template carries none of them.
 */
export function limitsEnvironment(config: RaskConfig): Record<string, string> {
  const entries: [string, number | undefined][] = [
    ['RASK_RATE_PRINCIPAL_PER_SECOND', config.ratePrincipalPerSecond || undefined],
    ['RASK_RATE_PRINCIPAL_BURST', config.ratePrincipalBurst],
    ['RASK_RATE_PROJECT_PER_SECOND', config.rateProjectPerSecond || undefined],
    ['RASK_RATE_PROJECT_BURST', config.rateProjectBurst],
    ['RASK_QUOTA_NAMESPACES', config.quotaNamespaces || undefined],
    ['RASK_QUOTA_TABLES', config.quotaTables || undefined],
    ['RASK_QUOTA_PRINCIPALS', config.quotaPrincipals || undefined],
    ['RASK_QUOTA_KEYS_PER_PRINCIPAL', config.quotaKeysPerPrincipal || undefined],
  ];
  return Object.fromEntries(entries.filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
}

/** A `rask:*ReservedConcurrency` setting as the function's property: `none` reserves nothing. */
export function reservedOrUndefined(value: number | 'none'): number | undefined {
  return value === 'none' ? undefined : value;
}

/** Time an API function keeps between its request deadline and Lambda's timeout, to answer. */
export const ANSWER_MARGIN = Duration.seconds(3);

/**
 * An API function's request deadline (RASK_COMMIT_DEADLINE_MS, lib/deadline.ts), derived from
 * its Lambda timeout: a door that runs into the deadline answers 503 / code 17 itself before
 * Lambda cuts it off (which API Gateway would answer with a bare 502). docs/deploy.md, "S3 budgets".
 */
export function deadlineEnvironment(timeout: Duration): Record<string, string> {
  return { RASK_COMMIT_DEADLINE_MS: String(Math.min(28_000, timeout.toMilliseconds() - ANSWER_MARGIN.toMilliseconds())) };
}

export interface CatalogFunctionsProps {
  readonly config: RaskConfig;
  readonly storage: StorageRefs;
  readonly queue: StateRefs['queue'];
}

/**
 * The two API functions (one per bundle of the operation table), the scheduled jobs function,
 * and the role that credential vending assumes.
 *
 * - meta: namespaces, table records, versions, declare/describe with vended credentials. Pure
 *   JavaScript, so arm64 (cheaper per GB-second) and no layer: it never loads LanceDB.
 * - data: Arrow IPC, queries, indices, schema changes. Runs LanceDB from the layer, on x86_64
 *   where LanceDB's binaries are published.
 * - jobs: runs queued jobs (large index builds, backfills, the per-table jobs the scheduled sweep
 *   and index build queue; docs/jobs.md, docs/maintenance.md) off the request path,
 *   started by a schedule (./jobs-schedule.ts), with the layer and Lambda's longest timeout.
 */
export class CatalogFunctions extends Construct {
  readonly meta: RaskFunction;
  readonly data: RaskFunction;
  readonly jobs: RaskFunction;
  readonly layer: lambda.LayerVersion;
  readonly vendingRole: iam.Role;

  constructor(scope: Construct, id: string, props: CatalogFunctionsProps) {
    super(scope, id);
    const { config, storage, queue } = props;

    this.layer = new LanceDbLayer(this, 'LanceDb').layer;

    // Each function gets its own copy: functions add their own variables below.
    const environment = () => catalogEnvironment(config, storage);

    this.meta = new RaskFunction(this, 'Meta', {
      kind: 'meta',
      description: 'rask metadata operations (no LanceDB)',
      architecture: lambda.Architecture.ARM_64,
      memorySize: config.metaMemoryMb,
      // Below API Gateway's 29 s integration timeout, so a stuck call ends as our JSON error, not a 504.
      timeout: Duration.seconds(25),
      environment: { ...environment(), ...deadlineEnvironment(Duration.seconds(25)) },
      logRetentionDays: config.logRetentionDays,
    });

    this.data = new RaskFunction(this, 'Data', {
      kind: 'data',
      description: 'rask data-plane operations (LanceDB from the layer)',
      architecture: LAYER_ARCHITECTURE,
      memorySize: config.dataMemoryMb,
      timeout: Duration.seconds(28),
      environment: { ...environment(), ...deadlineEnvironment(Duration.seconds(28)) },
      logRetentionDays: config.logRetentionDays,
      layers: [this.layer],
    });

    this.jobs = new RaskFunction(this, 'Jobs', {
      kind: 'jobs',
      description: 'rask scheduled jobs: index builds, backfills and per-table sweeps / index builds off the request path (LanceDB from the layer)',
      architecture: LAYER_ARCHITECTURE,
      memorySize: config.jobsMemoryMb,
      // Lambda's longest: a job started in the first five minutes has at least ten to finish
      // (functions/maintenance-jobs.ts); one that needs more is retried, then Failed.
      timeout: Duration.minutes(15),
      environment: environment(),
      logRetentionDays: config.logRetentionDays,
      layers: [this.layer],
      // A backlog must not take the account's concurrency from the API (docs/deploy.md, "Concurrency caps").
      reservedConcurrency: reservedOrUndefined(config.jobsReservedConcurrency),
    });

    const registry = { bucket: storage.registryBucket, prefix: storage.registryPrefix, access: 'registry' } as const;
    const warehouse = { bucket: storage.warehouseBucket, prefix: storage.warehousePrefix, access: 'warehouse' } as const;
    // The jobs function builds in the warehouse; it vends no credentials.
    for (const f of [this.meta, this.data, this.jobs]) {
      grantPrefixes(f.role, [registry, warehouse]);
    }
    // Jobs live in the DynamoDB work queue (lib/adapters/aws/dynamo-work-queue.ts): data
    // operations enqueue them, the metadata function describes and alters them (Describe/
    // AlterTransaction), the jobs function claims and runs them. All three must use the same
    // queue. Item-level actions only (no Scan, no stream reads), on the table and its one index.
    for (const f of [this.meta, this.data, this.jobs]) {
      f.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: [
            'dynamodb:GetItem',
            'dynamodb:PutItem',
            'dynamodb:UpdateItem',
            'dynamodb:DeleteItem',
            'dynamodb:ConditionCheckItem',
            'dynamodb:Query',
          ],
          resources: [queue.table.tableArn, `${queue.table.tableArn}/index/${WORK_QUEUE_SCHEMA.index.name}`],
        }),
      );
      f.fn.addEnvironment('RASK_WORK_QUEUE_TABLE', queue.tableName);
    }

    // DescribeTable with load_detailed_metadata: the metadata function cannot open datasets, so
    // it invokes the data function directly with an inspection event (lib/app/inspect-event.ts).
    // Named explicitly rather than grantInvoke, which adds every version and alias (`:*`).
    this.meta.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.data.fn.functionArn] }),
    );
    this.meta.fn.addEnvironment('RASK_DATA_FUNCTION_NAME', this.data.fn.functionName);

    // The role vended credentials are derived from; only the two function roles may assume it.
    this.vendingRole = new VendingRole(this, 'VendingRole', {
      trusted: [this.meta.role, this.data.role],
      storage,
      description: 'rask credential vending: assumed by the catalog functions with a per-table session policy',
    }).role;
    for (const f of [this.meta, this.data]) f.fn.addEnvironment('RASK_VENDING_ROLE_ARN', this.vendingRole.roleArn);
  }
}
