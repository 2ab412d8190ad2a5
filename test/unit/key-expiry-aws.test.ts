// @covers CreateApiKey
import { describe, expect, it } from 'vitest';
import { createAwsApp } from '../../lib/app/aws.js';
import { loadAwsConfig } from '../../lib/config.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { createS3Fake } from '../support/s3-fake.js';

/**
 * On AWS the functions never see the credential: the authorizer's context carries when it
 * expires (functions/authorizer.ts), and CreateApiKey bounds the keys it mints by it
 * (docs/governance.md, "Key expiry") exactly as the local guard does.
 */
describe('key expiry behind the API Gateway authorizer', () => {
  it("a key minted through a token's context expires with the token; a later expires_at is a 400", async () => {
    const fake = createS3Fake();
    const { router } = await createAwsApp(loadAwsConfig({ RASK_REGISTRY_BUCKET: 'reg-bucket', RASK_WAREHOUSE_BUCKET: 'wh-bucket' }), metaHandlers, fake.client);
    const call = async (p: string, body: object, authorizer: Record<string, string>) => {
      const res = await router({ method: 'POST', rawPath: p, rawQuery: '', headers: { 'content-type': 'application/json' }, authorizer, body: Buffer.from(JSON.stringify(body)), requestId: 'r' });
      return { status: res.status, json: JSON.parse(res.body.toString()) };
    };
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const token = { principal: 'oidc:root', platformAdmin: 'true', via: 'jwt', expiresAt };
    expect((await call('/v1/principals', { name: 'svc' }, token)).status).toBe(200);
    const minted = await call('/v1/principals/svc/keys', {}, token);
    expect(minted).toMatchObject({ status: 200, json: { expires_at: expiresAt } });
    const later = await call('/v1/principals/svc/keys', { expires_at: '2099-01-01T00:00:00Z' }, token);
    expect({ status: later.status, code: later.json.code }).toEqual({ status: 400, code: 13 });
    // The bootstrap key's context carries no expiry: what it mints may live for ever.
    const admin = { principal: 'admin', platformAdmin: 'true', via: 'admin-key' };
    expect((await call('/v1/principals/svc/keys', {}, admin)).json.expires_at).toBeNull();
  });
});
