import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { acknowledgeWildcardResource } from '../nag.js';

export interface RegistryBackupProps {
  /** The registry bucket (versioned: replication needs it, and so does `rask registry restore`). */
  readonly registryBucket: s3.Bucket;
  readonly registryPrefix: string;
  /**
   * An existing, versioned bucket, normally in another region (`rask:registryReplicaBucketArn`):
   * every registry write and delete under the prefix is replicated to it, versions included, so
   * `rask registry restore` / `export` work against the replica (`--registry-bucket`) when the
   * region is lost. Its own lifecycle decides how long its noncurrent versions stay.
   */
  readonly replicaBucketArn: string;
}

/**
 * The scheduled backup of the registry on AWS (issue #30 item 4; docs/operations.md, "Registry
 * backup and restore"): S3 cross-region replication of the registry prefix, delete markers
 * included, by a role that may read the registry's versions and replicate into the replica and
 * nothing else. Replication, not a scheduled export: it copies every version within minutes
 * without a function to run or watch, and the replica keeps history a restore can use.
 * (A one-off portable copy is `rask registry export`.) Set on the bucket's CloudFormation
 * resource, so the Storage construct stays as it is.
 */
export class RegistryBackup extends Construct {
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: RegistryBackupProps) {
    super(scope, id);
    const { registryBucket, registryPrefix, replicaBucketArn } = props;
    this.role = new iam.Role(this, 'ReplicationRole', {
      assumedBy: new iam.ServicePrincipal('s3.amazonaws.com'),
      description: 'Replicates the rask registry prefix to the replica bucket (docs/operations.md)',
    });
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['s3:GetReplicationConfiguration', 's3:ListBucket'], resources: [registryBucket.bucketArn] }));
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetObjectVersionForReplication', 's3:GetObjectVersionAcl', 's3:GetObjectVersionTagging'],
        resources: [registryBucket.arnForObjects(`${registryPrefix}*`)],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['s3:ReplicateObject', 's3:ReplicateDelete', 's3:ReplicateTags'], resources: [`${replicaBucketArn}/${registryPrefix}*`] }),
    );
    const why = 'replication acts on every object under the registry prefix, and nothing else';
    acknowledgeWildcardResource(this.role, registryBucket.arnForObjects(`${registryPrefix}*`), why);
    acknowledgeWildcardResource(this.role, `${replicaBucketArn}/${registryPrefix}*`, why);
    const cfn = registryBucket.node.defaultChild as s3.CfnBucket;
    cfn.replicationConfiguration = {
      role: this.role.roleArn,
      rules: [
        {
          id: 'replicate-registry',
          status: 'Enabled',
          priority: 1,
          filter: { prefix: registryPrefix },
          deleteMarkerReplication: { status: 'Enabled' },
          destination: { bucket: replicaBucketArn },
        },
      ],
    };
  }
}
