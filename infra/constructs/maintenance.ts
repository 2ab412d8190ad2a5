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
import type { BundleKind } from '../bundling.js';
import type { RaskConfig } from '../config.js';
import { acknowledge, acknowledgeWildcardResource } from '../nag.js';
import { grantPrefixes } from './permissions.js';
import { catalogEnvironment } from './functions.js';
import { WORK_QUEUE_SCHEMA } from './queue.js';
import { RaskFunction } from './rask-function.js';
import type { StateRefs, StorageRefs } from '../state-stack.js';

/** The scheduled maintenance passes (lib/maintenance/pass.ts PassName). */
export type MaintenancePassName = 'sweep' | 'index' | 'reconcile' | 'orphans';

/**
 * How each pass is deployed. `access` is the most its role may do:
 * - `report`: read the registry, list/read the warehouse and the work queue, and write only its
 *   own `reports/<pass>/` records (cursor and reports);
 * - `repair` (reconcile with repair on): registry read-write and enqueueing jobs; the warehouse
 *   stays read-only (purges run in the jobs function);
 * - `delete` (orphan scan with delete on): `report` plus deleting warehouse objects;
 * - `rewrite` (sweep, index build): registry and warehouse read-write and the work queue, with
 *   the LanceDB layer.
 */
export interface MaintenancePassSpec {
  readonly name: MaintenancePassName;
  readonly kind: BundleKind;
  readonly description: string;
  readonly lancedb: boolean;
  readonly memoryMb: number;
}

/**
 * The passes this construct deploys, one function each (functions/maintenance-<name>.ts). Sweep
 * and index build open datasets: x86_64 with the LanceDB layer (docs/maintenance.md, "Deployment").
 */
export const MAINTENANCE_PASSES: readonly MaintenancePassSpec[] = [
  {
    name: 'sweep',
    kind: 'maintenance-sweep',
    description: 'rask maintenance: sweep (compacts, folds indices, cleans up old versions per table policy)',
    lancedb: true,
    memoryMb: 4096,
  },
  {
    name: 'index',
    kind: 'maintenance-index',
    description: 'rask maintenance: index build (builds missing policy indices, folds past the threshold, reports health)',
    lancedb: true,
    memoryMb: 4096,
  },
  {
    name: 'reconcile',
    kind: 'maintenance-reconcile',
    description: 'rask maintenance: reconcile (reports registry/storage drift; repairs only when enabled)',
    lancedb: false,
    memoryMb: 512,
  },
  {
    name: 'orphans',
    kind: 'maintenance-orphans',
    description: 'rask maintenance: orphan scan (reports unreachable objects; deletes only when enabled)',
    lancedb: false,
    memoryMb: 1024,
  },
];

export interface MaintenanceSettings {
  /** Minutes between runs of each pass. */
  readonly everyMinutes: Readonly<Record<MaintenancePassName, number>>;
  /** Reconcile runs each door's repair path (and its role may write the registry). */
  readonly reconcileRepair: boolean;
  /** The orphan scan deletes re-checked candidates (and its role may delete warehouse objects). */
  readonly orphansDelete: boolean;
}

/** Index builds every 5 minutes, reconcile every 15, sweep hourly, orphan scan daily. */
export const DEFAULT_MAINTENANCE: MaintenanceSettings = {
  everyMinutes: { index: 5, reconcile: 15, sweep: 60, orphans: 1440 },
  reconcileRepair: false,
  orphansDelete: false,
};

const CONTEXT_KEYS = {
  index: 'rask:maintenanceIndexMinutes',
  reconcile: 'rask:maintenanceReconcileMinutes',
  sweep: 'rask:maintenanceSweepMinutes',
  orphans: 'rask:maintenanceOrphansMinutes',
} as const;

/**
 * Reads the maintenance settings from CDK context (`-c rask:maintenanceSweepMinutes=120`,
 * `-c rask:maintenanceReconcileRepair=true`, `-c rask:maintenanceOrphansDelete=true`); a bad
 * value fails the synth with the key's name.
 */
export function maintenanceSettingsFromContext(node: Node): MaintenanceSettings {
  const minutes = (pass: MaintenancePassName): number => {
    const raw = node.tryGetContext(CONTEXT_KEYS[pass]);
    if (raw === undefined || raw === null || raw === '') return DEFAULT_MAINTENANCE.everyMinutes[pass];
    const n = typeof raw === 'number' ? raw : /^\d+$/.test(String(raw)) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > 10_080) throw new Error(`${CONTEXT_KEYS[pass]} must be a whole number of minutes from 1 to 10080; got ${JSON.stringify(raw)}`);
    return n;
  };
  const flag = (key: string): boolean => {
    const raw = node.tryGetContext(key);
    if (raw === undefined || raw === null || raw === '' || raw === false || raw === 'false') return false;
    if (raw === true || raw === 'true') return true;
    throw new Error(`${key} must be true or false; got ${JSON.stringify(raw)}`);
  };
  return {
    everyMinutes: { index: minutes('index'), reconcile: minutes('reconcile'), sweep: minutes('sweep'), orphans: minutes('orphans') },
    reconcileRepair: flag('rask:maintenanceReconcileRepair'),
    orphansDelete: flag('rask:maintenanceOrphansDelete'),
  };
}

export interface MaintenanceProps {
  readonly config: RaskConfig;
  readonly storage: StorageRefs;
  readonly queue: StateRefs['queue'];
  readonly settings: MaintenanceSettings;
  /** The LanceDB layer, for the passes that open datasets (sweep, index build). */
  readonly layer?: lambda.ILayerVersion;
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
        architecture: spec.lancedb ? lambda.Architecture.X86_64 : lambda.Architecture.ARM_64,
        memorySize: spec.memoryMb,
        timeout: Duration.minutes(15),
        environment,
        logRetentionDays: config.logRetentionDays,
        ...(spec.lancedb && props.layer ? { layers: [props.layer] } : {}),
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
        metric: fn.fn.metricErrors({ period: Duration.minutes(Math.min(every, 60) < 5 ? 5 : Math.min(every, 60)), statistic: 'Sum' }),
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
    const registry = { bucket: storage.registryBucket, prefix: storage.registryPrefix, access: 'registry' } as const;
    const warehouse = { bucket: storage.warehouseBucket, prefix: storage.warehousePrefix, access: 'warehouse' } as const;
    const rewrites = spec.name === 'sweep' || spec.name === 'index';
    const repairs = spec.name === 'reconcile' && settings.reconcileRepair;
    const deletes = spec.name === 'orphans' && settings.orphansDelete;

    if (rewrites) grantPrefixes(role, [registry, warehouse]);
    else {
      // The registry: read everything, write only this pass's own reports (and all of it when repairing).
      if (repairs) grantPrefixes(role, [registry]);
      else {
        this.readPrefix(role, storage.registryBucket.arnForObjects(`${storage.registryPrefix}*`), storage.registryBucket.bucketArn, storage.registryPrefix, 'registry');
        const reports = storage.registryBucket.arnForObjects(`${storage.registryPrefix}reports/${spec.name}/*`);
        role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:DeleteObject'], resources: [reports] }));
        acknowledgeWildcardResource(role, reports, `The ${spec.name} pass writes only its own cursor and reports, under reports/${spec.name}/ of the registry prefix.`);
      }
      // The warehouse: list and read; delete only for an orphan scan with delete on.
      const objects = storage.warehouseBucket.arnForObjects(`${storage.warehousePrefix}*`);
      this.readPrefix(role, objects, storage.warehouseBucket.bucketArn, storage.warehousePrefix, 'warehouse');
      if (deletes) role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:DeleteObject'], resources: [objects] }));
    }

    const queueActions = rewrites || repairs
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
