import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { KeyStoreError, matchesAnyKey, parseKeys, presentedKeys } from '../lib/auth/api-key.js';
import { lambdaObservability, type Observability } from '../lib/observability/lambda.js';
import { apiRequestId, withPowertools } from '../lib/observability/middy.js';

/**
 * API Gateway REQUEST authorizer for the bootstrap admin key. A request must carry the key as
 * `x-api-key` or `Authorization: Bearer <key>`; anything else gets a Deny, which the API's
 * gateway responses turn into 401 with the JSON error contract (code 16). If the key store
 * cannot be read the authorizer throws, API Gateway answers 500 (code 18): it fails closed.
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

function policy(allow: boolean, methodArn: string): APIGatewayAuthorizerResult {
  return {
    principalId: allow ? PRINCIPAL_ID : 'anonymous',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: allow ? 'Allow' : 'Deny', Resource: stageWildcardArn(methodArn) }],
    },
    // Tells the catalog who the caller is, for when grants arrive; never the key itself.
    ...(allow ? { context: { principal: 'bootstrap-admin' } } : {}),
  };
}

/** The authorizer, with its key store injected (tests pass a fake). */
export function createAuthorizer(keys: KeyStore, log: AuthorizerLog = defaultLog) {
  return async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    const requestId = event.requestContext?.requestId;
    const presented = presentedKeys(event.headers);
    if (presented.length === 0) {
      log({ requestId, outcome: 'deny', reason: 'no key presented' });
      return policy(false, event.methodArn);
    }
    const allowed = matchesAnyKey(presented, await keys.get());
    if (!allowed) log({ requestId, outcome: 'deny', reason: 'key does not match' });
    return policy(allowed, event.methodArn);
  };
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
    authorize = createAuthorizer(parametersKeyStore(secretId, Number.isFinite(ttlSeconds) ? ttlSeconds : 300));
  }
  const result = await authorize(event);
  const allowed = (result.policyDocument.Statement[0] as { Effect?: string }).Effect === 'Allow';
  // Written every invocation (0 or 1), so the deny rate is an average and alarms see no gaps.
  observability.metrics.addMetric('AuthorizerDenied', MetricUnit.Count, allowed ? 0 : 1);
  observability.metrics.addMetric('AuthorizerAllowed', MetricUnit.Count, allowed ? 1 : 0);
  return result;
}

export const handler = withPowertools(authorizeRequest, observability, { correlationId: apiRequestId });
