import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { RaskConfig } from '../config.js';
import { acknowledge, acknowledgeWildcardResource } from '../nag.js';
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
  /**
   * The registry, where principals' API keys live (hashes only; docs/governance.md). Given, the
   * authorizer also accepts those keys (and OIDC tokens with the `rask:jwt*` context) and reads
   * exactly two key prefixes of it.
   */
  readonly registry?: { readonly bucket: s3.IBucket; readonly prefix: string };
}

/**
 * The authorizer's mode and OIDC settings from context (`rask:jwt*`, infra/config.ts): `jwt`
 * (API keys and bearer tokens) when the issuer, audience and JWKS URL are set, else `keys`.
 * Principals' keys and tokens need the registry; without it only the bootstrap key works.
 */
export function authModeEnvironment(config: RaskConfig, hasRegistry: boolean): Record<string, string> {
  if (!hasRegistry) return {};
  if (!config.jwtIssuer || !config.jwtAudience || !config.jwtJwksUrl) return { RASK_AUTH: 'keys' };
  return {
    RASK_AUTH: 'jwt',
    RASK_JWT_ISSUER: config.jwtIssuer,
    RASK_JWT_AUDIENCE: config.jwtAudience,
    RASK_JWT_JWKS_URL: config.jwtJwksUrl,
    RASK_JWT_PRINCIPAL_CLAIM: config.jwtPrincipalClaim ?? 'sub',
    ...(config.jwtMaxAgeSeconds === undefined ? {} : { RASK_JWT_MAX_AGE_SECONDS: String(config.jwtMaxAgeSeconds) }),
  };
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
        // API Gateway caches verdicts by this header alone (infra/constructs/api.ts): then it is
        // the only credential the authorizer may look at.
        ...(config.authorizerCacheSeconds > 0 ? { RASK_AUTHORIZER_IDENTITY_SOURCE: 'x-api-key' } : {}),
        ...(props.registry ? { RASK_REGISTRY_BUCKET: props.registry.bucket.bucketName, RASK_REGISTRY_PREFIX: props.registry.prefix } : {}),
        ...authModeEnvironment(config, Boolean(props.registry)),
      },
      logRetentionDays: config.logRetentionDays,
    });
    this.secret.grantRead(this.authorizer.role);
    if (props.registry) {
      const resources = ['apikeys/*', 'principals/*'].map((p) => props.registry!.bucket.arnForObjects(`${props.registry!.prefix}${p}`));
      this.authorizer.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources }));
      for (const arn of resources) {
        acknowledgeWildcardResource(this.authorizer.role, arn, 'The authorizer reads API key and principal records (hashes and names, never secrets) under these two registry prefixes; the key ids are not known at deploy time.');
      }
    }
  }
}
