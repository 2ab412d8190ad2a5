/**
 * The authorizer's real key source: the admin key secret in Secrets Manager, read through the
 * SDK client against a stateful fake (a map of secrets that tests rotate or delete), from the
 * Lambda handler down. Nothing here stubs the key source itself.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const SECRET_ID = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:rask-admin-key-AbCdEf';
const KEY = 'k'.repeat(20) + 'A1b2C3d4';
const NEXT = 'n'.repeat(20) + 'Z9y8X7w6';
const METHOD_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/POST/v1/table/ns%24t/describe';

/** Secrets Manager as far as the authorizer sees it: GetSecretValue over a mutable map. */
const secrets = new Map<string, { SecretString?: string; SecretBinary?: Uint8Array }>();
const sm = mockClient(SecretsManagerClient);
afterAll(() => sm.restore());

beforeEach(() => {
  secrets.clear();
  sm.reset();
  sm.on(GetSecretValueCommand).callsFake(async (input: { SecretId?: string }) => {
    const found = secrets.get(input.SecretId ?? '');
    if (!found) throw new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret.", $metadata: {} });
    return { ARN: input.SecretId, ...found };
  });
});

function event(headers: Record<string, string>): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: METHOD_ARN,
    resource: '/v1/table/{id}/describe',
    path: '/v1/table/ns%24t/describe',
    httpMethod: 'POST',
    headers,
    multiValueHeaders: null,
    pathParameters: { id: 'ns$t' },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: { requestId: 'req-1' } as APIGatewayRequestAuthorizerEvent['requestContext'],
  };
}

type Result = { policyDocument: { Statement: unknown[] } };
const effect = (r: Result) => (r.policyDocument.Statement[0] as { Effect: string }).Effect;

describe('parametersKeyStore', () => {
  it('reads the secret string by id, and sees a rotation on the next read once the max age is over', async () => {
    const { parametersKeyStore } = await import('../../functions/authorizer.js');
    secrets.set(SECRET_ID, { SecretString: KEY });
    const store = parametersKeyStore(SECRET_ID, 0);
    expect(await store.get()).toEqual([KEY]);
    secrets.set(SECRET_ID, { SecretString: JSON.stringify({ keys: [KEY, NEXT] }) });
    expect(await store.get()).toEqual([KEY, NEXT]);
    expect(sm.commandCalls(GetSecretValueCommand).map((c) => c.args[0].input.SecretId)).toEqual([SECRET_ID, SECRET_ID]);
  });

  it('refuses a binary secret and passes a missing one on (the authorizer fails closed)', async () => {
    const { parametersKeyStore } = await import('../../functions/authorizer.js');
    const { KeyStoreError } = await import('../../lib/auth/api-key.js');
    secrets.set(SECRET_ID, { SecretBinary: new Uint8Array([1, 2, 3]) });
    await expect(parametersKeyStore(SECRET_ID, 0).get()).rejects.toBeInstanceOf(KeyStoreError);
    await expect(parametersKeyStore('no-such-secret', 0).get()).rejects.toThrow(/can't find the specified secret/);
  });
});

describe('the Lambda handler over Secrets Manager', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  /** A fresh copy of the handler module: it keeps its authorizer in module state. */
  async function freshHandler(env: Record<string, string>) {
    Object.assign(process.env, env);
    vi.resetModules();
    const { handler } = await import('../../functions/authorizer.js');
    const context = { awsRequestId: 'req-1', functionName: 'authorizer', getRemainingTimeInMillis: () => 10_000 } as never;
    return (e: APIGatewayRequestAuthorizerEvent) => handler(e, context) as Promise<Result>;
  }

  it('allows the stored key and denies others, reading the secret once per cache period', async () => {
    secrets.set(SECRET_ID, { SecretString: KEY });
    const handler = await freshHandler({ RASK_ADMIN_KEY_SECRET_ID: SECRET_ID, RASK_ADMIN_KEY_CACHE_SECONDS: '300' });
    expect(effect(await handler(event({ 'x-api-key': KEY })))).toBe('Allow');
    expect(effect(await handler(event({ authorization: `Bearer ${KEY}` })))).toBe('Allow');
    expect(effect(await handler(event({ 'x-api-key': NEXT })))).toBe('Deny');
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('follows a rotation once the cache period is over (0 s here: every request reads)', async () => {
    secrets.set(SECRET_ID, { SecretString: KEY });
    const handler = await freshHandler({ RASK_ADMIN_KEY_SECRET_ID: SECRET_ID, RASK_ADMIN_KEY_CACHE_SECONDS: '0' });
    expect(effect(await handler(event({ 'x-api-key': NEXT })))).toBe('Deny');
    // Rotation: both keys during the overlap, then only the new one.
    secrets.set(SECRET_ID, { SecretString: JSON.stringify({ keys: [KEY, NEXT] }) });
    expect(effect(await handler(event({ 'x-api-key': KEY })))).toBe('Allow');
    expect(effect(await handler(event({ 'x-api-key': NEXT })))).toBe('Allow');
    secrets.set(SECRET_ID, { SecretString: NEXT });
    expect(effect(await handler(event({ 'x-api-key': KEY })))).toBe('Deny');
    expect(effect(await handler(event({ 'x-api-key': NEXT })))).toBe('Allow');
  });

  it('fails closed (throws, so API Gateway answers 500) when the secret is gone or too weak', async () => {
    const handler = await freshHandler({ RASK_ADMIN_KEY_SECRET_ID: SECRET_ID, RASK_ADMIN_KEY_CACHE_SECONDS: '0' });
    await expect(handler(event({ 'x-api-key': KEY }))).rejects.toThrow(/can't find the specified secret/);
    secrets.set(SECRET_ID, { SecretString: 'short' });
    await expect(handler(event({ 'x-api-key': 'short' }))).rejects.toThrow();
    // A failed read is not cached: once the secret is back, the same warm handler allows.
    secrets.set(SECRET_ID, { SecretString: KEY });
    expect(effect(await handler(event({ 'x-api-key': KEY })))).toBe('Allow');
  });
});
