import { Duration, NestedStack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { Action, OperationDef } from '../../lib/contract/operations.js';
import type { RaskConfig } from '../config.js';
import { perOperationDefs } from '../operation-entries.js';
import type { StateRefs, StorageRefs } from '../state-stack.js';
import { catalogEnvironment, deadlineEnvironment } from './functions.js';
import { LAYER_ARCHITECTURE } from './lancedb-layer.js';
import { grantPrefixes } from './permissions.js';
import { WORK_QUEUE_SCHEMA } from './queue.js';
import { RaskFunction } from './rask-function.js';
import { VendingRole } from './vending-role.js';

/** What an operation may change: derived from its authorization action (lib/contract/operations.ts). */
export type OperationAccess = 'read' | 'write';

/** Actions that only read: `*:read` and `project:list`. Everything else may write. */
export function accessOf(action: Action): OperationAccess {
  return action.endsWith(':read') || action === 'project:list' ? 'read' : 'write';
}

/**
 * Table operations may hand out credentials (DeclareTable, CreateTable and DescribeTable vend; the
 * guard vends read-only for reads): their roles may assume the vending role, no other role can.
 */
export const vends = (action: Action): boolean => action.startsWith('table:');

/**
 * The one operation whose handler uses the dataset-inspector port on AWS (DescribeTable with
 * `load_detailed_metadata` invokes the grouped data function). Named here because nothing in
 * the operation table says it.
 */
export const INSPECTING_OPERATIONS: ReadonlySet<string> = new Set(['DescribeTable']);

/**
 * The operation whose handler cancels jobs (AlterTransaction: lib/queue/jobs.ts, alterJob), and
 * so stops a canceled task-tier job's task. Named here for the same reason.
 */
export const CANCELLING_OPERATIONS: ReadonlySet<string> = new Set(['AlterTransaction']);

/** The job task tier as an operation function sees it (infra/constructs/job-tasks.ts). */
export interface OperationTaskTier {
  cancelledBy(functions: readonly RaskFunction[]): void;
  routeJobsOf(functions: readonly RaskFunction[]): void;
}

export interface OperationFunctionsProps {
  readonly config: RaskConfig;
  readonly storage: StorageRefs;
  readonly queue: StateRefs['queue'];
  readonly layer: lambda.ILayerVersion;
  /** The grouped data function: inspection target of DescribeTable. */
  readonly dataFunction: lambda.IFunction;
  /** `rask:jobsTaskTier=on`: the task tier, so that the functions route and cancel as the grouped ones do. */
  readonly jobTasks?: OperationTaskTier;
}

/**
 * `rask:functionMode=per-operation`: one function per operation of the operation table that has
 * a handler, in a nested stack of its own (≈ 5 resources per function would otherwise break the
 * 500-resource limit of the stateless stack). Each bundle holds only its operation's handler
 * module (infra/operation-bundles.ts); each role holds only what its operation needs, derived
 * from the table's facts:
 *
 * - `bundle`: data operations get the LanceDB layer and x86_64, metadata ones arm64 and no layer;
 * - `action` → read or write (`accessOf`): a read gets GetObject and prefix-scoped listing on the
 *   registry and the warehouse and GetItem / Query on the work queue, and RASK_READ_ONLY=true so
 *   its read paths never attempt the repairs they would make (lib/catalog/services.ts); a write gets the grouped
 *   functions' object and item actions (PutObject, DeleteObject, multipart, UpdateItem, …);
 * - `table:*` actions get a vending role of their own that trusts only their role (`vends`); DescribeTable may invoke the data
 *   function (`INSPECTING_OPERATIONS`); none may put events on the bus (the change relay publishes);
 * - with the job task tier, a write is told the tier exists (the jobs it queues route there, as
 *   from the grouped functions) and AlterTransaction (`CANCELLING_OPERATIONS`) may StopTask on
 *   its cluster; none may RunTask or pass a role (the grouped Jobs function dispatches).
 */
export class OperationFunctions extends NestedStack {
  readonly functions: ReadonlyMap<string, RaskFunction>;

  constructor(scope: Construct, id: string, props: OperationFunctionsProps) {
    super(scope, id, { description: 'rask: one function per operation (rask:functionMode=per-operation)' });
    const functions = new Map<string, RaskFunction>();
    for (const operation of perOperationDefs()) {
      functions.set(operation.operationId, this.operationFunction(operation, props));
    }
    this.functions = functions;

  }

  private operationFunction(operation: OperationDef, props: OperationFunctionsProps): RaskFunction {
    const { config, storage, queue } = props;
    const data = operation.bundle === 'data';
    const access = accessOf(operation.action);
    const timeout = Duration.seconds(data ? 28 : 25);
    const fn = new RaskFunction(this, operation.operationId, {
      kind: operation,
      description: `rask ${operation.operationId} (${access}, per-operation mode)`,
      architecture: data ? LAYER_ARCHITECTURE : lambda.Architecture.ARM_64,
      memorySize: data ? config.dataMemoryMb : config.metaMemoryMb,
      timeout,
      // A read's role cannot write, so its read paths must not try (repair on read is left to
      // writers and reconcile: docs/protocols.md, "Repair on read").
      environment: {
        ...catalogEnvironment(config, storage),
        ...deadlineEnvironment(timeout),
        ...(access === 'read' ? { RASK_READ_ONLY: 'true' } : {}),
      },
      logRetentionDays: config.logRetentionDays,
      layers: data ? [props.layer] : undefined,
    });
    const suffix = access === 'read' ? '-read' : '';
    grantPrefixes(fn.role, [
      { bucket: storage.registryBucket, prefix: storage.registryPrefix, access: `registry${suffix}` as const },
      { bucket: storage.warehouseBucket, prefix: storage.warehousePrefix, access: `warehouse${suffix}` as const },
    ]);
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions:
          access === 'read'
            ? ['dynamodb:GetItem', 'dynamodb:Query']
            : ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem', 'dynamodb:Query'],
        resources: [queue.table.tableArn, `${queue.table.tableArn}/index/${WORK_QUEUE_SCHEMA.index.name}`],
      }),
    );
    if (access === 'read') {
      // A read still takes its tokens from the shared rate buckets (lib/http/shared-rate-limit.ts):
      // one update, confined to the bucket items (partition keys under `rate/`), not the jobs.
      fn.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['dynamodb:UpdateItem'],
          resources: [queue.table.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${WORK_QUEUE_SCHEMA.rateBucketPrefix}*`] } },
        }),
      );
    }
    fn.fn.addEnvironment('RASK_WORK_QUEUE_TABLE', queue.tableName);
    // No events:PutEvents: a function appends its events to the change log and the change relay
    // publishes them (docs/events.md, "The relay").
    if (vends(operation.action)) {
      // A vending role of its own, trusting this function's role by name: one shared role would
      // have to trust ~45 roles, past the trust policy's size limit (docs/deploy.md, "Credential vending").
      const vending = new VendingRole(this, `${operation.operationId}Vending`, {
        trusted: [fn.role],
        storage,
        description: `rask credential vending for ${operation.operationId} (per-operation mode)`,
      }).role;
      fn.fn.addEnvironment('RASK_VENDING_ROLE_ARN', vending.roleArn);
    }
    if (INSPECTING_OPERATIONS.has(operation.operationId)) {
      fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.dataFunction.functionArn] }));
      fn.fn.addEnvironment('RASK_DATA_FUNCTION_NAME', props.dataFunction.functionName);
    }
    if (props.jobTasks && CANCELLING_OPERATIONS.has(operation.operationId)) props.jobTasks.cancelledBy([fn]);
    else if (props.jobTasks && access === 'write') props.jobTasks.routeJobsOf([fn]);
    return fn;
  }
}
