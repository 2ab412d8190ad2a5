/**
 * Issue 29, item 3: what the REST API costs in CloudFormation resources, per stack, in both
 * function modes. Prints the figures docs/deploy.md ("Resource counts") records, holds each
 * stack under CloudFormation's 500-resource limit with a margin for growth, and holds the API to
 * its one-document shape: routes cost no resource, the API a fixed handful plus one invoke
 * permission per function.
 *
 * Recorded (docs/deploy.md), `Rask` stack, total (API):
 *   before, one Resource/Method per route (main at 8faa6bf): grouped 338 (238), per-operation 430 (329) + nested 409
 *   after, a SpecRestApi from one OpenAPI document:        grouped 113 (13),  per-operation 205 (104) + nested 409
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import type { RaskConfig } from '../../infra/config.js';
import { createRaskApp } from '../../infra/rask-app.js';

const CFN_LIMIT = 500;
/** Room kept below the limit: a stack this full has no space for the next feature. */
const MARGIN = 50;

type Resources = Record<string, { Type: string }>;

/** The API's share: everything of the API Gateway service, plus the invoke permissions it needs. */
const isApiResource = (r: { Type: string }) => r.Type.startsWith('AWS::ApiGateway::') || r.Type === 'AWS::Lambda::Permission';

function countsOf(template: Template) {
  const resources = Object.values((template.toJSON() as { Resources: Resources }).Resources);
  const byType = (type: string) => resources.filter((r) => r.Type === type).length;
  return {
    total: resources.length,
    api: resources.filter(isApiResource).length,
    apiResources: byType('AWS::ApiGateway::Resource'),
    apiMethods: byType('AWS::ApiGateway::Method'),
    permissions: byType('AWS::Lambda::Permission'),
    /** The API Gateway service's own resources (RestApi, Deployment, Stage, Account, a domain). */
    gateway: resources.filter((r) => r.Type.startsWith('AWS::ApiGateway::')).length,
  };
}

function synthCounts(config: Partial<RaskConfig>) {
  const built = createRaskApp({
    context: { 'aws:cdk:bundling-stacks': [] },
    config,
    nag: false,
    outdir: mkdtempSync(path.join(tmpdir(), 'rask-cdk-')),
  });
  const stacks: Record<string, ReturnType<typeof countsOf>> = {
    [built.stateStack.stackName]: countsOf(Template.fromStack(built.stateStack)),
    [built.stack.stackName]: countsOf(Template.fromStack(built.stack)),
  };
  if (built.stack.operations) stacks[`${built.stack.stackName}/Operations`] = countsOf(Template.fromStack(built.stack.operations));
  return stacks;
}

describe('resource counts per stack (docs/deploy.md, "Resource counts")', () => {
  for (const functionMode of ['grouped', 'per-operation'] as const) {
    it(`${functionMode}: every stack stays ${MARGIN} below CloudFormation's ${CFN_LIMIT}`, () => {
      const stacks = synthCounts({ functionMode });
      // The figures docs/deploy.md records; printed so a change to the API shows its cost.
      for (const [name, c] of Object.entries(stacks)) {
        process.stdout.write(
          `resource-counts ${functionMode} ${name}: total ${c.total}, API ${c.api} (Resource ${c.apiResources}, Method ${c.apiMethods}, Lambda::Permission ${c.permissions})\n`,
        );
      }
      for (const [name, c] of Object.entries(stacks)) {
        expect(c.total, name).toBeLessThanOrEqual(CFN_LIMIT - MARGIN);
        // The routes live in the API's OpenAPI body (infra/constructs/openapi.ts), not in resources.
        expect([c.apiResources, c.apiMethods], name).toEqual([0, 0]);
        expect(c.gateway, name).toBeLessThanOrEqual(4);
      }
    }, 300_000);
  }
});
