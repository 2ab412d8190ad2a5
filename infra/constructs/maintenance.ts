import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct, type Node } from 'constructs';
import type { BundleKind } from '../bundle-kinds.js';
import type { RaskConfig } from '../config.js';
import { acknowledge, acknowledgeWildcardResource } from '../nag.js';
import { grantPrefixes } from './permissions.js';
import { catalogEnvironment, reservedOrUndefined } from './functions.js';
import { WORK_QUEUE_SCHEMA } from './queue.js';
import { RaskFunction } from './rask-function.js';
import type { StateRefs, StorageRefs } from '../state-stack.js';

/** The scheduled maintenance passes (lib/maintenance/pass.ts PassName). */
export type MaintenancePassName = 'sweep' | 'index' | 'reconcile' | 'orphans';

/**
 * How each pass is deployed. None opens a dataset, so none has the LanceDB layer: every one runs
 * on arm64 with the memory a registry walk needs. What each role may do:
 * - `reconcile`, `orphans` (report): read the registry, list/read the warehouse and the work
 *   queue, and write only their own `reports/<pass>/` records (cursor and reports);
 * - `reconcile` with repair on: registry read-write and enqueueing jobs; the warehouse stays
 *   read-only (purges run in the jobs function);
 * - `orphans` with delete on: report access plus deleting warehouse objects;
 * - `sweep`, `index` (fan-out, lib/maintenance/fan-out-passes.ts): read the registry and list/read
 *   the warehouse (the registry-only table checks), write their own reports and their pending
 *   markers (`p/<project>/maint/pending/<pass>/`), and get/put job items in the work queue. The
 *   per-table rewrite happens in the jobs function, whose role writes table data; these cannot.
 */
export interface MaintenancePassSpec {
  readonly name: MaintenancePassName;
  readonly kind: BundleKind;
  readonly description: string;
  /** Default memory (context `rask:maintenance<Pass>MemoryMb` overrides it). */
  readonly memoryMb: number;
  /** Walks the registry and queues one job per table (sweep, index build). */
  readonly fansOut: boolean;
}

/**
 * The passes this construct deploys, one function each (functions/maintenance-<name>.ts). Sweep
 * and index build only walk and enqueue; the jobs function runs their per-table work with
 * LanceDB (docs/maintenance.md, "Deployment"). test/infra/bundle.test.ts checks that none of
 * these bundles reaches LanceDB, Arrow or a native module.
 */
export const MAINTENANCE_PASSES: readonly MaintenancePassSpec[] = [
  {
    name: 'sweep',
    kind: 'maintenance-sweep',
    description: 'rask maintenance: sweep (queues a per-table compact / fold / cleanup job for the jobs function)',
    memoryMb: 512,
    fansOut: true,
  },
  {
    name: 'index',
    kind: 'maintenance-index',
    description: 'rask maintenance: index build (queues a per-table index build / fold / health job for the jobs function)',
    memoryMb: 512,
    fansOut: true,
  },
  {
    name: 'reconcile',
    kind: 'maintenance-reconcile',
    description: 'rask maintenance: reconcile (reports registry/storage drift; repairs only when enabled)',
    memoryMb: 512,
    fansOut: false,
  },
  {
    name: 'orphans',
    kind: 'maintenance-orphans',
    description: 'rask maintenance: orphan scan (reports unreachable objects; deletes only when enabled)',
    memoryMb: 1024,
    fansOut: false,
  },
];

export interface MaintenanceSettings {
  /** Minutes between runs of each pass. */
  readonly everyMinutes: Readonly<Record<MaintenancePassName, number>>;
  /** Memory of each pass's function, in MB. */
  readonly memoryMb: Readonly<Record<MaintenancePassName, number>>;
  /** Reconcile runs each door's repair path (and its role may write the registry). */
  readonly reconcileRepair: boolean;
  /** The orphan scan deletes re-checked candidates (and its role may delete warehouse objects). */
  readonly orphansDelete: boolean;
}

/** Index builds every 5 minutes, reconcile every 15, sweep hourly, orphan scan daily. */
export const DEFAULT_MAINTENANCE: MaintenanceSettings = {
  everyMinutes: { index: 5, reconcile: 15, sweep: 60, orphans: 1440 },
  memoryMb: { index: 512, reconcile: 512, sweep: 512, orphans: 1024 },
  reconcileRepair: false,
  orphansDelete: false,
};

const CONTEXT_KEYS = {
  index: 'rask:maintenanceIndexMinutes',
  reconcile: 'rask:maintenanceReconcileMinutes',
  sweep: 'rask:maintenanceSweepMinutes',
  orphans: 'rask:maintenanceOrphansMinutes',
} as const;

const MEMORY_KEYS = {
  index: 'rask:maintenanceIndexMemoryMb',
  reconcile: 'rask:maintenanceReconcileMemoryMb',
  sweep: 'rask:maintenanceSweepMemoryMb',
  orphans: 'rask:maintenanceOrphansMemoryMb',
} as const;

/**
 * Reads the maintenance settings from CDK context (`-c rask:maintenanceSweepMinutes=120`,
 * `-c rask:maintenanceReconcileRepair=true`, `-c rask:maintenanceOrphansDelete=true`,
 * `-c rask:maintenanceSweepMemoryMb=1024`); a bad value fails the synth with the key's name.
 */
export function maintenanceSettingsFromContext(node: Node): MaintenanceSettings {
  const whole = (key: string, fallback: number, min: number, max: number, unit: string): number => {
    const raw = node.tryGetContext(key);
    if (raw === undefined || raw === null || raw === '') return fallback;
    const n = typeof raw === 'number' ? raw : /^\d+$/.test(String(raw)) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${key} must be a whole number of ${unit} from ${min} to ${max}; got ${JSON.stringify(raw)}`);
    return n;
  };
  const minutes = (pass: MaintenancePassName) => whole(CONTEXT_KEYS[pass], DEFAULT_MAINTENANCE.everyMinutes[pass], 1, 10_080, 'minutes');
  // Lambda's own bounds.
  const memory = (pass: MaintenancePassName) => whole(MEMORY_KEYS[pass], DEFAULT_MAINTENANCE.memoryMb[pass], 128, 10_240, 'MB');
  const flag = (key: string): boolean => {
    const raw = node.tryGetContext(key);
    if (raw === undefined || raw === null || raw === '' || raw === false || raw === 'false') return false;
    if (raw === true || raw === 'true') return true;
    throw new Error(`${key} must be true or false; got ${JSON.stringify(raw)}`);
  };
  return {
    everyMinutes: { index: minutes('index'), reconcile: minutes('reconcile'), sweep: minutes('sweep'), orphans: minutes('orphans') },
    memoryMb: { index: memory('index'), reconcile: memory('reconcile'), sweep: memory('sweep'), orphans: memory('orphans') },
    reconcileRepair: flag('rask:maintenanceReconcileRepair'),
    orphansDelete: flag('rask:maintenanceOrphansDelete'),
  };
}

export interface MaintenanceProps {
  readonly config: RaskConfig;
  readonly storage: StorageRefs;
  readonly queue: StateRefs['queue'];
  readonly settings: MaintenanceSettings;
  readonly passes?: readonly MaintenancePassSpec[];
  /** Where each pass's alarm notifies (the stack's monitoring topic); default: `config.alarmTopicArn`, if set. */
  readonly alarmTopic?: sns.ITopic;
}

/** One deployed pass: its function, schedule, failure queue and alarm. */
export interface DeployedPass {
  readonly fn: RaskFunction;
  readonly rule: events.Rule;
  readonly failures: sqs.Queue;
  readonly alarm: cloudwatch.Alarm;
}

/**
 * The scheduled maintenance passes, each its own function on its own EventBridge rule (a drift
 * report must not inherit a data-rewriting pass's schedule), with the least privilege its
 * settings allow, a failure destination (an SQS queue receiving the event of every invocation
 * that failed: an incomplete pass throws) and an alarm on its errors.
 *
 * Every function gets Lambda's longest timeout: a pass works in slices, stops starting work a
 * minute before it, saves a cursor under `reports/<pass>/` in the registry, and the next
 * scheduled invocation continues from there (lib/maintenance/lambda.ts). Lambda and EventBridge
 * retry nothing (the next tick is the retry); overlapping invocations are safe because every
 * registry write is a compare-and-swap and reports are written once.
 */
export class Maintenance extends Construct {
  readonly passes: Partial<Record<MaintenancePassName, DeployedPass>> = {};

  constructor(scope: Construct, id: string, props: MaintenanceProps) {
    super(scope, id);
    const { config, storage, queue, settings } = props;
    const topic = props.alarmTopic ?? (config.alarmTopicArn ? sns.Topic.fromTopicArn(this, 'AlarmTopic', config.alarmTopicArn) : undefined);

    for (const spec of props.passes ?? MAINTENANCE_PASSES) {
      const id = spec.name.charAt(0).toUpperCase() + spec.name.slice(1);
      const environment: Record<string, string> = { ...catalogEnvironment(config, storage), RASK_WORK_QUEUE_TABLE: queue.tableName };
      if (spec.name === 'reconcile') environment.RASK_RECONCILE_REPAIR = String(settings.reconcileRepair);
      if (spec.name === 'orphans') environment.RASK_ORPHANS_DELETE = String(settings.orphansDelete);

      const fn = new RaskFunction(this, id, {
        kind: spec.kind,
        description: spec.description,
        // Nothing native in any of these bundles (test/infra/bundle.test.ts): arm64.
        architecture: lambda.Architecture.ARM_64,
        memorySize: settings.memoryMb[spec.name],
        timeout: Duration.minutes(15),
        environment,
        logRetentionDays: config.logRetentionDays,
        // Overlapping ticks are safe but bounded: a slow pass cannot pile up (docs/deploy.md, "Concurrency caps").
        reservedConcurrency: reservedOrUndefined(config.maintenanceReservedConcurrency),
      });
      this.grant(fn.role, spec, props);

      const failures = new sqs.Queue(this, `${id}Failures`, {
        retentionPeriod: Duration.days(14),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      acknowledge(failures, 'AwsSolutions-SQS3', 'This queue is itself the failure destination of a scheduled function; nothing consumes it automatically, so it needs no dead-letter queue.');
      fn.fn.configureAsyncInvoke({ onFailure: new destinations.SqsDestination(failures), retryAttempts: 0, maxEventAge: Duration.hours(1) });

      const every = settings.everyMinutes[spec.name];
      const rule = new events.Rule(this, `${id}Schedule`, {
        description: `rask maintenance: ${spec.name} every ${every} minute(s)`,
        schedule: events.Schedule.rate(Duration.minutes(every)),
        targets: [new targets.LambdaFunction(fn.fn, { retryAttempts: 0, maxEventAge: Duration.hours(1) })],
      });

      const alarm = new cloudwatch.Alarm(this, `${id}Errors`, {
        alarmDescription: `rask maintenance ${spec.name} failed or could not cover everything (see its failure queue and reports/${spec.name}/ in the registry)`,
        metric: fn.fn.metricErrors({ period: Duration.minutes(Math.max(5, Math.min(every, 60))), statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      if (topic) {
        alarm.addAlarmAction(new actions.SnsAction(topic));
        alarm.addOkAction(new actions.SnsAction(topic));
      }
      this.passes[spec.name] = { fn, rule, failures, alarm };
    }
  }

  private grant(role: iam.Role, spec: MaintenancePassSpec, props: MaintenanceProps): void {
    const { storage, queue, settings } = props;
    const registryPrefix = storage.registryPrefix;
    const repairs = spec.name === 'reconcile' && settings.reconcileRepair;
    const deletes = spec.name === 'orphans' && settings.orphansDelete;

    // The registry: read everything; write only this pass's own reports (and, fanning out, its
    // pending markers; repairing, all of it).
    if (repairs) grantPrefixes(role, [{ bucket: storage.registryBucket, prefix: registryPrefix, access: 'registry' }]);
    else {
      this.readPrefix(role, storage.registryBucket.arnForObjects(`${registryPrefix}*`), storage.registryBucket.bucketArn, registryPrefix, 'registry');
      const reports = storage.registryBucket.arnForObjects(`${registryPrefix}reports/${spec.name}/*`);
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:DeleteObject'], resources: [reports] }));
      acknowledgeWildcardResource(role, reports, `The ${spec.name} pass writes only its own cursor and reports, under reports/${spec.name}/ of the registry prefix.`);
      if (spec.fansOut) {
        // One marker per (pass, table) naming the job queued for it (lib/maintenance/fan-out.ts):
        // created or replaced, never deleted, by the pass.
        const pending = storage.registryBucket.arnForObjects(`${registryPrefix}p/*/maint/pending/${spec.name}/*`);
        role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [pending] }));
        acknowledgeWildcardResource(role, pending, `The ${spec.name} pass writes only its pending-job markers, under p/<project>/maint/pending/${spec.name}/ of the registry prefix.`);
      }
    }
    // The change log: each run that did material work appends its `maintenance.<pass>.completed`
    // event (lib/app/scheduled-pass.ts); the change relay takes it to the bus. Append only (a
    // conditional PutObject of a new key), never read back or delete.
    if (!repairs) {
      const log = storage.registryBucket.arnForObjects(`${registryPrefix}changes/*`);
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [log] }));
      acknowledgeWildcardResource(role, log, `The ${spec.name} pass appends its completion event to the change log, under changes/ of the registry prefix.`);
    }
    // The warehouse: list and read; delete only for an orphan scan with delete on. No pass writes
    // table data: the sweep's and index build's rewrites run in the jobs function.
    const objects = storage.warehouseBucket.arnForObjects(`${storage.warehousePrefix}*`);
    this.readPrefix(role, objects, storage.warehouseBucket.bucketArn, storage.warehousePrefix, 'warehouse');
    if (deletes) role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:DeleteObject'], resources: [objects] }));

    // The work queue: repair may alter jobs, a report lists them; fanning out only reads a
    // marker's job and puts a new one (item actions on the table, never its index).
    if (spec.fansOut && !repairs) {
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['dynamodb:GetItem', 'dynamodb:PutItem'], resources: [queue.table.tableArn] }));
      return;
    }
    const queueActions = repairs
      ? ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem', 'dynamodb:Query']
      : ['dynamodb:GetItem', 'dynamodb:Query'];
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: queueActions, resources: [queue.table.tableArn, `${queue.table.tableArn}/index/${WORK_QUEUE_SCHEMA.index.name}`] }),
    );
  }

  private readPrefix(role: iam.Role, objectsArn: string, bucketArn: string, prefix: string, what: string): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [objectsArn] }));
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucketArn], conditions: { StringLike: { 's3:prefix': [`${prefix}*`] } } }),
    );
    acknowledgeWildcardResource(role, objectsArn, `Read-only access to the catalog's ${what} key prefix "${prefix}"; the trailing * stands for the keys under it.`);
  }
}
