import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { functionCode } from '../asset-source.js';
import type { BundleKind } from '../bundle-kinds.js';
import { acknowledge } from '../nag.js';
import { operationHandler } from '../operation-entries.js';
import type { OperationDef } from '../../lib/contract/operations.js';

export const RUNTIME = lambda.Runtime.NODEJS_22_X;

export interface RaskFunctionProps {
  /** A fixed entry of infra/bundling.ts, or one operation's entry in its bundle's shared asset (per-operation mode). */
  readonly kind: BundleKind | OperationDef;
  readonly description: string;
  readonly architecture: lambda.Architecture;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly environment: Record<string, string>;
  readonly logRetentionDays: number;
  readonly layers?: lambda.ILayerVersion[];
  /** At most this many concurrent executions, reserved from the account's pool (absent: unreserved). */
  readonly reservedConcurrency?: number;
}

/**
 * One Lambda function with its own role and log group. The role starts empty (no
 * AWSLambdaBasicExecutionRole): it may write to its own log group and nothing else until the
 * caller grants more, which keeps every permission visible in this repository.
 */
export class RaskFunction extends Construct {
  readonly fn: lambda.Function;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: RaskFunctionProps) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: typeof props.kind === 'string' ? `rask ${props.kind} function` : `rask ${props.kind.operationId} function`,
    });
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetentionDays as logs.RetentionDays,
      // Operational logs; the API's access logs (kept on stack deletion) are the audit trail.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.logGroup.grantWrite(this.role);

    this.fn = new lambda.Function(this, 'Function', {
      code: functionCode(typeof props.kind === 'string' ? props.kind : `operations-${props.kind.bundle}`),
      handler: typeof props.kind === 'string' ? 'index.handler' : operationHandler(props.kind),
      description: props.description,
      runtime: RUNTIME,
      architecture: props.architecture,
      memorySize: props.memorySize,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      environment: props.environment,
      layers: props.layers,
      reservedConcurrentExecutions: props.reservedConcurrency,
      // X-Ray: Powertools Tracer records the AWS SDK calls as subsegments (lib/observability/).
      tracing: lambda.Tracing.ACTIVE,
    });
    acknowledge(
      this.role,
      'AwsSolutions-IAM5[Resource::*]',
      'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so the statement Lambda adds for active tracing names "*"; it grants nothing else.',
    );
    acknowledge(
      this.fn,
      'AwsSolutions-L1',
      'nodejs22.x is the runtime this project targets and tests (the LanceDB native module and the development toolchain are validated on Node 22); it is supported until 2027-04-30 and moves to nodejs24.x with the toolchain.',
    );
  }
}
