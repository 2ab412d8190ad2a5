import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { RaskConfig } from '../config.js';
import { acknowledge } from '../nag.js';
import { RaskFunction } from './rask-function.js';

/**
 * The bootstrap admin key (stateful stack): kept with the data, so redeploying the stateless
 * stack keeps the key clients hold.
 */
export class AdminKeySecret extends Construct {
  readonly secret: secretsmanager.Secret;

  constructor(scope: Construct, id: string, props: { readonly removalPolicy: RemovalPolicy }) {
    super(scope, id);
    this.secret = new secretsmanager.Secret(this, 'AdminKey', {
      description: 'rask bootstrap admin API key (send as x-api-key or Authorization: Bearer)',
      // 48 letters and digits (~285 bits): safe in any header without quoting.
      generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
      removalPolicy: props.removalPolicy,
    });
    acknowledge(
      this.secret,
      'AwsSolutions-SMG4',
      'The bootstrap key is rotated by the operator (docs/deploy.md: put-secret-value, optionally with an overlap of two keys); automatic rotation would invalidate the key clients hold with no way to hand them the new one. Per-user keys replace it.',
    );
  }
}

export interface AdminKeyAuthProps {
  readonly config: RaskConfig;
  /** The admin key (AdminKeySecret, in the stateful stack). */
  readonly secret: secretsmanager.ISecret;
}

/**
 * The Lambda authorizer that checks the bootstrap admin key. Until per-user keys exist, every
 * request must present this key (`x-api-key` or `Authorization: Bearer`); the deployed API is
 * never open.
 */
export class AdminKeyAuth extends Construct {
  readonly secret: secretsmanager.ISecret;
  readonly authorizer: RaskFunction;

  constructor(scope: Construct, id: string, props: AdminKeyAuthProps) {
    super(scope, id);
    const { config } = props;
    this.secret = props.secret;

    this.authorizer = new RaskFunction(this, 'Authorizer', {
      kind: 'authorizer',
      description: 'rask API key authorizer',
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.seconds(10),
      environment: {
        RASK_ADMIN_KEY_SECRET_ID: this.secret.secretArn,
        // A rotated key is picked up within this many seconds by warm containers.
        RASK_ADMIN_KEY_CACHE_SECONDS: '300',
      },
      logRetentionDays: config.logRetentionDays,
    });
    this.secret.grantRead(this.authorizer.role);
  }
}
