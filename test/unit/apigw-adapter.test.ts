import type { APIGatewayProxyEvent } from 'aws-lambda';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAwsApp } from '../../lib/app/aws.js';
import { loadAwsConfig } from '../../lib/config.js';
import { lambdaHandler, toHttpRequest } from '../../lib/http/apigw-adapter.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { createS3Fake } from '../support/s3-fake.js';

const event = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../events/${name}`, import.meta.url), 'utf8')) as APIGatewayProxyEvent;

/** The sample events in events/ through the real Lambda handler, over the S3 composition. */
describe('API Gateway REST (v1) adapter', () => {
  const setup = async () => {
    const fake = createS3Fake();
    const config = loadAwsConfig({ RASK_REGISTRY_BUCKET: 'reg-bucket', RASK_WAREHOUSE_BUCKET: 'wh-bucket' });
    const app = await createAwsApp(config, metaHandlers, fake.client);
    return { fake, handler: lambdaHandler(async () => app.router) };
  };

  it('keeps the encoded path so ids decode exactly (+ is a space, %2F a slash in a name)', () => {
    const req = toHttpRequest(event('create-namespace.json'));
    expect(req.rawPath).toBe('/v1/namespace/sales+eu%24q%2F4/create');
    expect(req.headers['x-api-key']).toBe('k-123');
    expect(new URLSearchParams(req.rawQuery).get('delimiter')).toBe('$');
  });

  it('serves create, list and a base64 body end to end, writing the registry in S3', async () => {
    const { fake, handler } = await setup();
    expect((await handler(event('create-parent-namespace.json'))).statusCode).toBe(200);
    const created = await handler(event('create-namespace.json'));
    expect(created.statusCode).toBe(200);
    expect(JSON.parse(created.body)).toEqual({ properties: { owner: 'ana' } });

    const listed = await handler(event('list-namespaces.json'));
    expect(JSON.parse(listed.body)).toEqual({ namespaces: ['q/4'] });

    const described = await handler(event('describe-namespace-base64.json'));
    expect(described.statusCode).toBe(200);
    expect(JSON.parse(described.body)).toEqual({ properties: { owner: 'ana' }, protected: false });

    const keys = [...fake.bucketContents('reg-bucket').keys()];
    expect(keys).toContain('registry/p/default/t/sales%20eu/+n/q%2F4');
    expect(keys).toContain('registry/layout.json');
  });

  it('answers an unknown route with the JSON error contract', async () => {
    const { handler } = await setup();
    const res = await handler(event('unknown-route.json'));
    expect(res.statusCode).toBe(404);
    expect(res.headers?.['content-type']).toBe('application/json');
    expect(JSON.parse(res.body)).toMatchObject({ code: 0, instance: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef' });
  });

  it('answers a malformed event with a JSON 400 instead of throwing', async () => {
    const { handler } = await setup();
    const res = await handler({ requestContext: { requestId: 'r1' } } as unknown as APIGatewayProxyEvent);
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 13, instance: 'r1' });
  });

  it('refuses to start without its buckets configured', () => {
    expect(() => loadAwsConfig({})).toThrow(/RASK_REGISTRY_BUCKET/);
  });
});
