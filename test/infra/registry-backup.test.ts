import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../infra/config.js';
import { synthRask } from './helpers.js';

/**
 * Issue #30 item 4: the registry's noncurrent-version retention is a setting
 * (`rask:registryNoncurrentDays`), and `rask:registryReplicaBucketArn` replicates the registry
 * prefix, delete markers included, to a replica bucket by a role limited to that.
 */
describe('registry backup on AWS', () => {
  const arn = 'arn:aws:s3:::rask-registry-replica-eu-west-1';
  const { stateTemplate, template } = synthRask({ registryNoncurrentDays: 14, registryReplicaBucketArn: arn }, { nag: true });

  it('keeps noncurrent registry versions as long as the setting says', () => {
    stateTemplate.hasResourceProperties('AWS::S3::Bucket', {
      VersioningConfiguration: { Status: 'Enabled' },
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ Id: 'expire-noncurrent-registry-versions', NoncurrentVersionExpiration: { NoncurrentDays: 14 } })]) },
    });
  });

  it('replicates the registry prefix with its delete markers to the replica', () => {
    stateTemplate.hasResourceProperties('AWS::S3::Bucket', {
      ReplicationConfiguration: {
        Rules: [Match.objectLike({ Status: 'Enabled', Filter: { Prefix: 'registry/' }, DeleteMarkerReplication: { Status: 'Enabled' }, Destination: { Bucket: arn } })],
      },
    });
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) => JSON.stringify(p).includes('s3:ReplicateObject'));
    expect(policies).toHaveLength(1);
    const text = JSON.stringify(policies[0]);
    expect(text).toContain(`${arn}/registry/*`);
    expect(text).not.toContain('"s3:*"');
  });

  it('replicates nothing unless asked, and refuses a replica that is not a bucket ARN', () => {
    const plain = synthRask().stateTemplate;
    expect(JSON.stringify(plain.toJSON())).not.toContain('ReplicationConfiguration');
    expect(() => resolveConfig({ registryReplicaBucketArn: 'my-bucket' })).toThrow(/registryReplicaBucketArn/);
    expect(() => resolveConfig({ registryNoncurrentDays: 0 })).toThrow(/registryNoncurrentDays/);
  });
});
