import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { PRINCIPAL_ID, createAuthorizer, handler, principalResolverFromEnv, stageWildcardArn } from '../../functions/authorizer.js';
import { lambdaContext } from '../support/lambda-context.js';
import { CachedKeys, KeyStoreError, matchesAnyKey, parseKeys, presentedKeys, type KeySource } from '../../lib/auth/api-key.js';

const KEY = 'k'.repeat(20) + 'A1b2C3d4';
const OTHER = 'z'.repeat(28);
const METHOD_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/POST/v1/table/ns%24t/describe';

/** A key store that counts its reads. */
function fakeSource(secret: string | (() => Promise<string>)): KeySource & { reads: number } {
  const source = {
    reads: 0,
    async read() {
      source.reads++;
      return typeof secret === 'string' ? secret : secret();
    },
  };
  return source;
}

function event(headers: Record<string, string> | null): APIGatewayRequestAuthorizerEvent {
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

const effect = (r: Awaited<ReturnType<ReturnType<typeof createAuthorizer>>>) =>
  (r.policyDocument.Statement[0] as { Effect: string }).Effect;

describe('presentedKeys', () => {
  it('reads x-api-key and Authorization: Bearer, case-insensitively', () => {
    expect(presentedKeys({ 'X-Api-Key': ' abc ' })).toEqual(['abc']);
    expect(presentedKeys({ authorization: 'Bearer tok' })).toEqual(['tok']);
    expect(presentedKeys({ Authorization: 'bearer   tok  ' })).toEqual(['tok']);
    expect(presentedKeys({ 'x-api-key': 'a', Authorization: 'Bearer b' })).toEqual(['a', 'b']);
  });

  it('ignores other schemes, empty values and missing headers', () => {
    expect(presentedKeys({ authorization: 'Basic dXNlcjpwYXNz' })).toEqual([]);
    expect(presentedKeys({ authorization: 'Bearer' })).toEqual([]);
    expect(presentedKeys({ 'x-api-key': '   ' })).toEqual([]);
    expect(presentedKeys(null)).toEqual([]);
    expect(presentedKeys(undefined)).toEqual([]);
  });
});

describe('parseKeys', () => {
  it('accepts a bare key or {"keys": [...]} for rotation', () => {
    expect(parseKeys(`  ${KEY}\n`)).toEqual([KEY]);
    expect(parseKeys(JSON.stringify({ keys: [KEY, OTHER] }))).toEqual([KEY, OTHER]);
  });

  it('refuses secrets that would make a weak or empty key acceptable', () => {
    for (const bad of ['', '   ', 'short', JSON.stringify({ keys: [] }), JSON.stringify({ keys: [KEY, ''] }), JSON.stringify({ keys: [42] }), '{not json', JSON.stringify({ key: KEY }), `${KEY} ${OTHER}`]) {
      expect(() => parseKeys(bad), bad).toThrow(KeyStoreError);
    }
  });
});

describe('matchesAnyKey', () => {
  it('matches exactly, whatever the lengths', () => {
    expect(matchesAnyKey([KEY], [KEY])).toBe(true);
    expect(matchesAnyKey([OTHER, KEY], [KEY])).toBe(true);
    expect(matchesAnyKey([KEY], [OTHER, KEY])).toBe(true);
    expect(matchesAnyKey([KEY.slice(0, -1)], [KEY])).toBe(false);
    expect(matchesAnyKey([KEY + 'x'], [KEY])).toBe(false);
    expect(matchesAnyKey([KEY.toLowerCase()], [KEY])).toBe(false);
    expect(matchesAnyKey([], [KEY])).toBe(false);
    expect(matchesAnyKey([KEY], [])).toBe(false);
  });
});

describe('CachedKeys', () => {
  it('reads once within the TTL, shares a concurrent read and re-reads after the TTL', async () => {
    let now = 1_000;
    const source = fakeSource(KEY);
    const keys = new CachedKeys(source, 60_000, () => now);
    await Promise.all([keys.get(), keys.get(), keys.get()]);
    expect(source.reads).toBe(1);
    now += 59_999;
    await keys.get();
    expect(source.reads).toBe(1);
    now += 1;
    await keys.get();
    expect(source.reads).toBe(2);
  });

  it('does not cache a failed read', async () => {
    let fail = true;
    const source = fakeSource(async () => {
      if (fail) throw new Error('throttled');
      return KEY;
    });
    const keys = new CachedKeys(source, 60_000);
    await expect(keys.get()).rejects.toThrow('throttled');
    fail = false;
    await expect(keys.get()).resolves.toEqual([KEY]);
    expect(source.reads).toBe(2);
  });
});

describe('authorizer', () => {
  const make = (secret = KEY) => {
    const source = fakeSource(secret);
    const log = vi.fn();
    return { authorize: createAuthorizer(new CachedKeys(source, 300_000), log), source, log };
  };

  it('allows the right key as x-api-key or Bearer, for the whole stage', async () => {
    const { authorize } = make();
    const variants: Record<string, string>[] = [{ 'x-api-key': KEY }, { Authorization: `Bearer ${KEY}` }, { 'X-API-KEY': KEY }];
    for (const headers of variants) {
      const result = await authorize(event(headers));
      expect(effect(result)).toBe('Allow');
      expect(result.principalId).toBe(PRINCIPAL_ID);
      expect(result.policyDocument.Statement[0]).toMatchObject({
        Action: 'execute-api:Invoke',
        Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*',
      });
      expect(JSON.stringify(result)).not.toContain(KEY);
    }
  });

  it('denies a wrong key or no key, and logs why without the key', async () => {
    const { authorize, log, source } = make();
    expect(effect(await authorize(event({ 'x-api-key': OTHER })))).toBe('Deny');
    expect(effect(await authorize(event({ authorization: `Basic ${KEY}` })))).toBe('Deny');
    expect(effect(await authorize(event({})))).toBe('Deny');
    expect(effect(await authorize(event(null)))).toBe('Deny');
    expect(log).toHaveBeenCalledWith({ requestId: 'req-1', outcome: 'deny', reason: 'key does not match' });
    expect(log).toHaveBeenCalledWith({ requestId: 'req-1', outcome: 'deny', reason: 'no key presented' });
    expect(JSON.stringify(log.mock.calls)).not.toContain(OTHER);
    // Requests without a key never touch the key store.
    expect(source.reads).toBe(1);
  });

  it('accepts both keys during a rotation', async () => {
    const { authorize } = make(JSON.stringify({ keys: [KEY, OTHER] }));
    expect(effect(await authorize(event({ 'x-api-key': KEY })))).toBe('Allow');
    expect(effect(await authorize(event({ 'x-api-key': OTHER })))).toBe('Allow');
  });

  it('fails closed when the key store is unusable', async () => {
    const { authorize } = make('tiny');
    await expect(authorize(event({ 'x-api-key': 'tiny' }))).rejects.toThrow(KeyStoreError);
  });

  it('refuses to start without the secret id', async () => {
    const before = process.env.RASK_ADMIN_KEY_SECRET_ID;
    delete process.env.RASK_ADMIN_KEY_SECRET_ID;
    try {
      await expect(handler(event({ 'x-api-key': KEY }), lambdaContext())).rejects.toThrow(/RASK_ADMIN_KEY_SECRET_ID/);
    } finally {
      if (before !== undefined) process.env.RASK_ADMIN_KEY_SECRET_ID = before;
    }
  });

  it('derives the stage-wide resource from the method ARN', () => {
    expect(stageWildcardArn(METHOD_ARN)).toBe('arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*');
    expect(stageWildcardArn('weird')).toBe('weird');
  });
});

describe('principals beyond the bootstrap key', () => {
  it("passes a resolved principal on in the context (never the key), and denies what nothing resolves", async () => {
    const resolve = async (presented: readonly string[]) =>
      presented.includes('rask_abc_' + 'x'.repeat(40)) ? { principal: 'alice', platformAdmin: false, via: 'api-key' as const } : undefined;
    const authorize = createAuthorizer(new CachedKeys(fakeSource(KEY), 60_000), () => {}, resolve);
    const allowed = await authorize(event({ 'x-api-key': 'rask_abc_' + 'x'.repeat(40) }));
    expect(effect(allowed)).toBe('Allow');
    expect(allowed.principalId).toBe('alice');
    expect(allowed.context).toEqual({ principal: 'alice', platformAdmin: 'false', via: 'api-key' });
    expect(JSON.stringify(allowed)).not.toContain('x'.repeat(40));
    expect(effect(await authorize(event({ 'x-api-key': OTHER })))).toBe('Deny');
    const admin = await authorize(event({ authorization: `Bearer ${KEY}` }));
    expect(admin.context).toEqual({ principal: 'admin', platformAdmin: 'true', via: 'admin-key' });
  });

  it("passes on when the caller's credential expires, so the functions bound the keys it mints", async () => {
    const expiresAt = '2030-01-31T12:00:00.000Z';
    const resolve = async () => ({ principal: 'oidc:carol', platformAdmin: false, via: 'jwt' as const, expiresAt });
    const authorize = createAuthorizer(new CachedKeys(fakeSource(KEY), 60_000), () => {}, resolve);
    expect((await authorize(event({ authorization: 'Bearer a.b.c' }))).context).toEqual({ principal: 'oidc:carol', platformAdmin: 'false', via: 'jwt', expiresAt });
  });
});

describe('with the API Gateway result cache on (keyed by x-api-key)', () => {
  it('decides on the x-api-key header alone, so a cached verdict never rests on another header', async () => {
    const authorize = createAuthorizer(new CachedKeys(fakeSource(KEY), 60_000), () => {}, undefined, { onlyApiKeyHeader: true });
    expect(effect(await authorize(event({ 'x-api-key': OTHER, authorization: `Bearer ${KEY}` })))).toBe('Deny');
    expect(effect(await authorize(event({ 'x-api-key': KEY })))).toBe('Allow');
    // Without the cache both headers are looked at, and two credentials at once are refused (ambiguous).
    const open = createAuthorizer(new CachedKeys(fakeSource(KEY), 60_000), () => {});
    expect(effect(await open(event({ 'x-api-key': OTHER, authorization: `Bearer ${KEY}` })))).toBe('Deny');
  });
});

describe('the authorizer\'s mode from its environment (set by rask:jwt* context)', () => {
  const JWT = { RASK_JWT_ISSUER: 'https://login.example.com/', RASK_JWT_AUDIENCE: 'rask-api', RASK_JWT_JWKS_URL: 'https://login.example.com/jwks.json' };
  it('refuses jwt mode without the token settings instead of quietly accepting keys only', () => {
    expect(() => principalResolverFromEnv({ RASK_REGISTRY_BUCKET: 'b', RASK_AUTH: 'jwt', RASK_JWT_ISSUER: JWT.RASK_JWT_ISSUER })).toThrow(/RASK_AUTH=jwt needs/);
    expect(principalResolverFromEnv({ RASK_REGISTRY_BUCKET: 'b', RASK_AUTH: 'jwt', ...JWT })).toBeTypeOf('function');
    expect(principalResolverFromEnv({ RASK_REGISTRY_BUCKET: 'b', RASK_AUTH: 'keys' })).toBeTypeOf('function');
  });

  it('refuses a maximum token age that is not a whole number of at least 60 seconds', () => {
    for (const bad of ['5', 'a day', '600.5']) {
      expect(() => principalResolverFromEnv({ RASK_REGISTRY_BUCKET: 'b', RASK_AUTH: 'jwt', ...JWT, RASK_JWT_MAX_AGE_SECONDS: bad })).toThrow(/RASK_JWT_MAX_AGE_SECONDS/);
    }
    expect(principalResolverFromEnv({ RASK_REGISTRY_BUCKET: 'b', RASK_AUTH: 'jwt', ...JWT, RASK_JWT_MAX_AGE_SECONDS: '3600' })).toBeTypeOf('function');
  });
});
