import path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENTRY_POINTS, REPO_ROOT, SHARED, externalModules, installedModules, type BundleKind } from '../bundling.js';
import { acknowledge } from '../nag.js';

export const RUNTIME = lambda.Runtime.NODEJS_22_X;

export interface RaskFunctionProps {
  readonly kind: BundleKind;
  readonly description: string;
  readonly architecture: lambda.Architecture;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly environment: Record<string, string>;
  readonly logRetentionDays: number;
  readonly layers?: lambda.ILayerVersion[];
}

/**
 * One Lambda function with its own role and log group. The role starts empty (no
 * AWSLambdaBasicExecutionRole): it may write to its own log group and nothing else until the
 * caller grants more, which keeps every permission visible in this repository.
 */
export class RaskFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: RaskFunctionProps) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `rask ${props.kind} function`,
    });
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetentionDays as logs.RetentionDays,
      // Operational logs; the API's access logs (kept on stack deletion) are the audit trail.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.logGroup.grantWrite(this.role);

    this.fn = new NodejsFunction(this, 'Function', {
      entry: ENTRY_POINTS[props.kind],
      handler: 'handler',
      description: props.description,
      runtime: RUNTIME,
      architecture: props.architecture,
      memorySize: props.memorySize,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      environment: props.environment,
      layers: props.layers,
      // X-Ray: Powertools Tracer records the AWS SDK calls as subsegments (lib/observability/).
      tracing: lambda.Tracing.ACTIVE,
      projectRoot: REPO_ROOT,
      depsLockFilePath: path.join(REPO_ROOT, 'package-lock.json'),
      bundling: {
        format: OutputFormat.ESM,
        target: SHARED.target,
        mainFields: [...SHARED.mainFields],
        minify: SHARED.minify,
        keepNames: SHARED.keepNames,
        sourceMap: SHARED.sourcemap,
        banner: SHARED.banner,
        externalModules: externalModules(props.kind),
        nodeModules: installedModules(props.kind),
      },
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
