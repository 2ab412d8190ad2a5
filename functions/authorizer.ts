import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CachedKeys, KeyStoreError, matchesAnyKey, presentedKeys, type KeySource } from '../lib/auth/api-key.js';

/**
 * API Gateway REQUEST authorizer for the bootstrap admin key. A request must carry the key as
 * `x-api-key` or `Authorization: Bearer <key>`; anything else gets a Deny, which the API's
 * gateway responses turn into 401 with the JSON error contract (code 16). If the key store
 * cannot be read the authorizer throws, API Gateway answers 500 (code 18): it fails closed.
 */

export const PRINCIPAL_ID = 'rask-admin';

export type AuthorizerLog = (entry: Record<string, unknown>) => void;

const defaultLog: AuthorizerLog = (entry) => console.log(JSON.stringify(entry));

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
export function createAuthorizer(keys: CachedKeys, log: AuthorizerLog = defaultLog) {
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

/** The admin key lives in Secrets Manager; the client is created on first use. */
export function secretsManagerKeySource(secretId: string): KeySource {
  let client: SecretsManagerClient | undefined;
  return {
    async read() {
      client ??= new SecretsManagerClient({});
      const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
      if (typeof out.SecretString !== 'string') throw new KeyStoreError('the admin key secret has no string value');
      return out.SecretString;
    },
  };
}

let authorize: ReturnType<typeof createAuthorizer> | undefined;

export const handler = async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
  if (!authorize) {
    const secretId = process.env.RASK_ADMIN_KEY_SECRET_ID;
    if (!secretId) throw new KeyStoreError('RASK_ADMIN_KEY_SECRET_ID is not set');
    const ttlSeconds = Number(process.env.RASK_ADMIN_KEY_CACHE_SECONDS ?? '300');
    authorize = createAuthorizer(new CachedKeys(secretsManagerKeySource(secretId), (Number.isFinite(ttlSeconds) ? ttlSeconds : 300) * 1000));
  }
  return authorize(event);
};
