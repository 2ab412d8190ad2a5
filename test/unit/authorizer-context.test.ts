import type { APIGatewayProxyEvent } from 'aws-lambda';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAwsApp } from '../../lib/app/aws.js';
import { loadAwsConfig } from '../../lib/config.js';
import { lambdaHandler } from '../../lib/http/apigw-adapter.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { createS3Fake } from '../support/s3-fake.js';

const event = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../events/${name}`, import.meta.url), 'utf8')) as APIGatewayProxyEvent;

/** On AWS the caller is what the authorizer's context says, never what the headers say. */
describe('identity from the API Gateway authorizer context', () => {
  const handler = async () => {
    const app = await createAwsApp(loadAwsConfig({ RASK_REGISTRY_BUCKET: 'reg-bucket', RASK_WAREHOUSE_BUCKET: 'wh-bucket' }), metaHandlers, createS3Fake().client);
    return lambdaHandler(async () => app.router);
  };

  it('answers 401 / code 16 without a context, whatever key the headers carry', async () => {
    const e = event('create-parent-namespace.json');
    const { authorizer: _dropped, ...requestContext } = e.requestContext as unknown as Record<string, unknown>;
    const res = await (await handler())({ ...e, headers: { ...e.headers, 'x-api-key': 'anything' }, requestContext } as unknown as APIGatewayProxyEvent);
    expect(res.statusCode).toBe(401);
    expect(JSON.parse(res.body).code).toBe(16);
  });

  it("authorizes the context's principal: one without grants is denied", async () => {
    const e = event('create-parent-namespace.json');
    const requestContext = { ...e.requestContext, authorizer: { principal: 'nobody', platformAdmin: 'false', via: 'api-key' } };
    const res = await (await handler())({ ...e, requestContext } as APIGatewayProxyEvent);
    expect(res.statusCode).toBe(403);
    expect(JSON.parse(res.body).code).toBe(15);
    const admin = await (await handler())(e);
    expect(admin.statusCode).toBe(200);
  });
});
