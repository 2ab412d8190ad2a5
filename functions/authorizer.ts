import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore } from '../lib/adapters/aws/s3-object-store.js';
import { KeyStoreError, matchesAnyKey, parseKeys, presentedKeys } from '../lib/auth/api-key.js';
import { identify } from '../lib/governance/identify.js';
import { DEFAULT_JWT_MAX_AGE_SECONDS } from '../lib/config.js';
import { jwtVerifier } from '../lib/governance/jwt.js';
import { lambdaObservability, type Observability } from '../lib/observability/lambda.js';
import { apiRequestId, withPowertools } from '../lib/observability/middy.js';
import type { Caller } from '../lib/contract/request.js';
import { Registry } from '../lib/registry/registry.js';

/**
 * API Gateway REQUEST authorizer: it verifies every caller's credential — the bootstrap admin
 * key (Secrets Manager), a principal's API key (the registry, read-only) or an OIDC token (the
 * configured issuer's JWKS; lib/governance/identify.ts does both) — presented as `x-api-key` or
 * `Authorization: Bearer <key|token>`. Anything else gets a Deny, which the API's gateway
 * responses turn into 401 with the JSON error contract (code 16). If the key store cannot be
 * read the authorizer throws, API Gateway answers 500 (code 18): it fails closed. Authorization
 * (what the caller may do) is the guard's, in the function behind it (docs/governance.md).
 */

export const PRINCIPAL_ID = 'rask-admin';

export type AuthorizerLog = (entry: Record<string, unknown>) => void;

/** The accepted keys, parsed; a store that cannot produce one throws (the authorizer fails closed). */
export interface KeyStore {
  get(): Promise<string[]>;
}

export const observability: Observability = lambdaObservability('authorizer');

const defaultLog: AuthorizerLog = ({ outcome, ...fields }) => observability.logger.info(`authorizer ${String(outcome)}`, { outcome, ...fields });

/**
 * The policy covers every method and path of the stage, not just the one called, so that a
 * verdict cached by API Gateway (rask:authorizerCacheSeconds) is valid for the caller's next
 * request to any operation.
 */
export function stageWildcardArn(methodArn: string): string {
  // arn:aws:execute-api:<region>:<account>:<api-id>/<stage>/<METHOD>/<path...>
  const [prefix, stage] = methodArn.split('/');
  return prefix && stage ? `${prefix}/${stage}/*` : methodArn;
}

const BOOTSTRAP: Caller = { principal: 'admin', platformAdmin: true, via: 'admin-key' };

function policy(caller: Caller | undefined, methodArn: string): APIGatewayAuthorizerResult {
  return {
    principalId: caller ? (caller === BOOTSTRAP ? PRINCIPAL_ID : caller.principal) : 'anonymous',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: caller ? 'Allow' : 'Deny', Resource: stageWildcardArn(methodArn) }],
    },
    // The catalog's guard takes the caller from here (lib/governance/guard.ts, mode
    // `authorizer`) and never re-parses the headers; the credential itself is never passed on.
    ...(caller
      ? { context: { principal: caller.principal, platformAdmin: String(caller.platformAdmin), via: caller.via, ...(caller.expiresAt ? { expiresAt: caller.expiresAt } : {}) } }
      : {}),
  };
}

/** Principals' API keys and OIDC tokens (beyond the bootstrap key): who, if anyone, they prove. */
export type PrincipalResolver = (presented: readonly string[]) => Promise<Caller | undefined>;

/** The authorizer, with its key store injected (tests pass a fake). */
export function createAuthorizer(
  keys: KeyStore,
  log: AuthorizerLog = defaultLog,
  resolve?: PrincipalResolver,
  options: { onlyApiKeyHeader?: boolean } = {},
) {
  return async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    const requestId = event.requestContext?.requestId;
    // With API Gateway's result cache on, the cache key is the x-api-key header alone, so that
    // must be the only credential a verdict rests on: a Bearer token next to a bad key must not
    // get the bad key cached as allowed.
    const headers = options.onlyApiKeyHeader
      ? Object.fromEntries(Object.entries(event.headers ?? {}).filter(([name]) => name.toLowerCase() === 'x-api-key'))
      : event.headers;
    const presented = presentedKeys(headers);
    if (presented.length === 0) {
      log({ requestId, outcome: 'deny', reason: 'no key presented' });
      return policy(undefined, event.methodArn);
    }
    // Both x-api-key and a Bearer: refused, never one silently chosen (docs/governance.md). With
    // the cache on only x-api-key is looked at, so this cannot happen there.
    if (presented.length > 1) {
      log({ requestId, outcome: 'deny', reason: 'ambiguous credentials' });
      return policy(undefined, event.methodArn);
    }
    if (matchesAnyKey(presented, await keys.get())) return policy(BOOTSTRAP, event.methodArn);
    const caller = resolve ? await resolve(presented) : undefined;
    if (!caller) log({ requestId, outcome: 'deny', reason: 'key does not match' });
    else log({ requestId, outcome: 'allow', principal: caller.principal, via: caller.via });
    return policy(caller, event.methodArn);
  };
}

/**
 * Principals' keys live in the registry (S3, read-only for the authorizer); tokens are checked
 * against the configured OIDC issuer. Absent registry settings: only the bootstrap key works.
 */
export function principalResolverFromEnv(env: NodeJS.ProcessEnv = process.env): PrincipalResolver | undefined {
  if (!env.RASK_REGISTRY_BUCKET) return undefined;
  const registry = new Registry(
    new S3ObjectStore({ client: new S3Client({}), bucket: env.RASK_REGISTRY_BUCKET, prefix: env.RASK_REGISTRY_PREFIX ?? 'registry/' }),
  );
  const configured = Boolean(env.RASK_JWT_ISSUER && env.RASK_JWT_AUDIENCE && env.RASK_JWT_JWKS_URL);
  // RASK_AUTH is set by the stack (rask:jwt* context, infra/constructs/auth.ts); unset, the
  // mode follows the RASK_JWT_* settings. Asked for tokens without their settings is a broken
  // deployment, refused loudly rather than quietly accepting keys only.
  if (env.RASK_AUTH === 'jwt' && !configured) {
    throw new KeyStoreError('RASK_AUTH=jwt needs RASK_JWT_ISSUER, RASK_JWT_AUDIENCE and RASK_JWT_JWKS_URL');
  }
  const maxAgeSeconds = Number(env.RASK_JWT_MAX_AGE_SECONDS ?? DEFAULT_JWT_MAX_AGE_SECONDS);
  if (!Number.isInteger(maxAgeSeconds) || maxAgeSeconds < 60) {
    throw new KeyStoreError('RASK_JWT_MAX_AGE_SECONDS must be a whole number of seconds, at least 60');
  }
  const jwt =
    configured && env.RASK_AUTH !== 'keys'
      ? jwtVerifier({
          issuer: env.RASK_JWT_ISSUER!,
          audience: env.RASK_JWT_AUDIENCE!,
          jwksUrl: env.RASK_JWT_JWKS_URL!,
          principalClaim: env.RASK_JWT_PRINCIPAL_CLAIM ?? 'sub',
          maxAgeSeconds,
        })
      : undefined;
  return (presented) => identify({ mode: jwt ? 'jwt' : 'keys', ...(jwt ? { jwt } : {}) }, { registry }, presented);
}

/**
 * The admin key from Secrets Manager through Powertools Parameters: the value is cached for
 * `maxAgeSeconds` (a rotated secret takes effect within it) and a failed fetch is not cached.
 * The secret's value is never logged; only its parse errors are, and they do not quote it.
 */
export function parametersKeyStore(secretId: string, maxAgeSeconds: number, provider = defaultProvider()): KeyStore {
  return {
    async get() {
      const value = await provider.get(secretId, { maxAge: maxAgeSeconds });
      if (typeof value !== 'string') throw new KeyStoreError('the admin key secret has no string value');
      return parseKeys(value);
    },
  };
}

function defaultProvider(): SecretsProvider {
  return new SecretsProvider({ awsSdkV3Client: observability.instrument(new SecretsManagerClient({})) });
}

let authorize: ReturnType<typeof createAuthorizer> | undefined;

async function authorizeRequest(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  if (!authorize) {
    const secretId = process.env.RASK_ADMIN_KEY_SECRET_ID;
    if (!secretId) throw new KeyStoreError('RASK_ADMIN_KEY_SECRET_ID is not set');
    const ttlSeconds = Number(process.env.RASK_ADMIN_KEY_CACHE_SECONDS ?? '300');
    authorize = createAuthorizer(
      parametersKeyStore(secretId, Number.isFinite(ttlSeconds) ? ttlSeconds : 300),
      defaultLog,
      principalResolverFromEnv(),
      { onlyApiKeyHeader: process.env.RASK_AUTHORIZER_IDENTITY_SOURCE === 'x-api-key' },
    );
  }
  const result = await authorize(event);
  const allowed = (result.policyDocument.Statement[0] as { Effect?: string }).Effect === 'Allow';
  // Written every invocation (0 or 1), so the deny rate is an average and alarms see no gaps.
  observability.metrics.addMetric('AuthorizerDenied', MetricUnit.Count, allowed ? 0 : 1);
  observability.metrics.addMetric('AuthorizerAllowed', MetricUnit.Count, allowed ? 1 : 0);
  return result;
}

export const handler = withPowertools(authorizeRequest, observability, { correlationId: apiRequestId });
