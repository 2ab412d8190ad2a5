import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { RaskConfig } from './config.js';
import { CatalogAlarms } from './constructs/alarms.js';
import { CatalogApi } from './constructs/api.js';
import { AdminKeyAuth } from './constructs/auth.js';
import { CatalogFunctions } from './constructs/functions.js';
import { JobsSchedule } from './constructs/jobs-schedule.js';
import { WorkQueue } from './constructs/queue.js';
import { Storage } from './constructs/storage.js';

export interface RaskStackProps extends StackProps {
  readonly config: RaskConfig;
}

/**
 * The whole catalog in one stack: storage, the work-queue table, the four functions (meta, data,
 * jobs, authorizer) with their layer and the vending role, the jobs schedule, the admin key, the
 * API and the alarms. One stack keeps
 * references plain (no cross-stack exports to untangle on teardown); the data survives stack
 * deletion through RETAIN removal policies instead of a separate stack.
 */
export class RaskStack extends Stack {
  readonly storage: Storage;
  readonly queue: WorkQueue;
  readonly functions: CatalogFunctions;
  readonly auth: AdminKeyAuth;
  readonly api: CatalogApi;
  readonly alarms: CatalogAlarms;
  readonly jobsSchedule: JobsSchedule;

  constructor(scope: Construct, id: string, props: RaskStackProps) {
    super(scope, id, props);
    const { config } = props;

    this.storage = new Storage(this, 'Storage', { config });
    this.queue = new WorkQueue(this, 'WorkQueue', { removalPolicy: config.removalPolicy });
    this.functions = new CatalogFunctions(this, 'Functions', { config, storage: this.storage, queue: this.queue });
    this.jobsSchedule = new JobsSchedule(this, 'JobsSchedule', { fn: this.functions.jobs.fn });
    this.auth = new AdminKeyAuth(this, 'Auth', { config });
    this.api = new CatalogApi(this, 'Api', {
      config,
      handlers: { meta: this.functions.meta.fn, data: this.functions.data.fn },
      authorizer: this.auth.authorizer.fn,
    });
    this.alarms = new CatalogAlarms(this, 'Alarms', {
      api: this.api.api,
      functions: {
        Meta: this.functions.meta.fn,
        Data: this.functions.data.fn,
        Jobs: this.functions.jobs.fn,
        Authorizer: this.auth.authorizer.fn,
      },
      topicArn: config.alarmTopicArn,
    });

    new CfnOutput(this, 'Endpoint', {
      description: "Catalog URI for clients: connectNamespace('rest', { uri: <this>, headers: { 'x-api-key': <key> } })",
      value: this.api.endpoint,
    });
    new CfnOutput(this, 'AdminKeySecretName', {
      description: 'Secrets Manager secret holding the bootstrap admin key',
      value: this.auth.secret.secretName,
    });
    new CfnOutput(this, 'AdminKeySecretArn', { value: this.auth.secret.secretArn });
    new CfnOutput(this, 'ReadAdminKeyCommand', {
      description: 'Prints the admin key',
      value: `aws secretsmanager get-secret-value --secret-id ${this.auth.secret.secretArn} --query SecretString --output text --region ${this.region}`,
    });
    new CfnOutput(this, 'RegistryBucketName', { value: this.storage.registryBucket.bucketName });
    new CfnOutput(this, 'WarehouseBucketName', { value: this.storage.warehouseBucket.bucketName });
    new CfnOutput(this, 'WarehouseRoot', {
      description: 'Storage root of the default warehouse',
      value: `s3://${this.storage.warehouseBucket.bucketName}/${this.storage.warehousePrefix}`,
    });
    new CfnOutput(this, 'WorkQueueTableName', { value: this.queue.table.tableName });
    new CfnOutput(this, 'VendingRoleArn', { value: this.functions.vendingRole.roleArn });
  }
}
