/**
 * Issue 29, item 1: `RaskCatalog` and `RaskCatalogState` used as constructs in an app of one's
 * own (docs/deploy.md, "Rask in your own CDK app"): in one stack (the state used directly), in two
 * stacks (SSM parameters, no export), and props validated at synth with the setting's name.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { RaskCatalog } from '../../infra/catalog.js';
import { RaskCatalogState } from '../../infra/catalog-state.js';
import { RaskConfigError } from '../../infra/config.js';

/**
 * An app of one's own, with cdk-nag's AwsSolutions checks failing the synth on a finding. It sets
 * none of this repository's feature flags: the constructs must not depend on the app's.
 */
function newApp(): App {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: mkdtempSync(path.join(tmpdir(), 'rask-construct-')) });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return app;
}
/** A whole catalog synthesized with cdk-nag takes minutes on a loaded 2-core machine. */
const SYNTH_TIMEOUT = 300_000;
const countOf = (t: Template, type: string) => Object.keys(t.findResources(type)).length;

describe('RaskCatalog in an app of its own', () => {
  it('one stack: the catalog uses the state directly (no SSM parameter, no export), takes its props, cdk-nag clean', () => {
    const app = newApp();
    const stack = new Stack(app, 'Platform');
    const state = new RaskCatalogState(stack, 'CatalogState', { trashGraceDays: 7 });
    const catalog = new RaskCatalog(stack, 'Catalog', { state, dataMemoryMb: 3008, throttleRateLimit: 50, maintenanceSweepMinutes: 120 });
    const t = Template.fromStack(stack);
    expect(countOf(t, 'AWS::SSM::Parameter')).toBe(0);
    expect(t.toJSON().Outputs ?? {}).toEqual({});
    // The state's settings reach the catalog (one source of truth for prefixes and the grace).
    expect(catalog.config.trashGraceDays).toBe(7);
    expect(catalog.config.stackName).toBe('Platform');
    const fn = (logicalIdPrefix: string) => Object.entries(t.findResources('AWS::Lambda::Function')).find(([id]) => id.startsWith(logicalIdPrefix))?.[1] as { Properties: { MemorySize: number } };
    expect(fn('CatalogFunctionsData').Properties.MemorySize).toBe(3008);
    t.hasResourceProperties('AWS::ApiGateway::Stage', { MethodSettings: [{ ThrottlingRateLimit: 50 }] });
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(2 hours)' });
    expect(catalog.endpoint).toBeTruthy();
    expect(catalog.eventBus).toBe(state.eventBus);
  }, SYNTH_TIMEOUT);

  it('two stacks (per-operation): the compute stack reads SSM parameters, depends on the state stack, uses no export, cdk-nag clean', () => {
    const app = newApp();
    const stateStack = new Stack(app, 'CatalogData');
    const computeStack = new Stack(app, 'CatalogCompute');
    const state = new RaskCatalogState(stateStack, 'State', { parameterPrefix: '/platform/rask' });
    new RaskCatalog(computeStack, 'Catalog', { state, functionMode: 'per-operation' });
    const data = Template.fromStack(stateStack).toJSON();
    const compute = Template.fromStack(computeStack).toJSON();
    const names = Object.values(data.Resources as Record<string, { Type: string; Properties: { Name: string } }>).filter((r) => r.Type === 'AWS::SSM::Parameter').map((r) => r.Properties.Name);
    expect(names.sort()).toEqual(['AdminKeySecretArn', 'EventBusArn', 'EventBusName', 'RegistryBucketArn', 'RegistryBucketName', 'WarehouseBucketArn', 'WarehouseBucketName', 'WorkQueueTableArn', 'WorkQueueTableName'].map((n) => `/platform/rask/${n}`));
    expect(Object.values(data.Outputs ?? {}).filter((o) => (o as { Export?: unknown }).Export)).toEqual([]);
    expect(JSON.stringify(compute)).not.toContain('Fn::ImportValue');
    expect(computeStack.dependencies).toContain(stateStack);
  }, SYNTH_TIMEOUT);

  it('one stack, per-operation: the nested stack takes the state\'s ARNs as parameters, cdk-nag clean', () => {
    const app = newApp();
    const stack = new Stack(app, 'PerOperation');
    const catalog = new RaskCatalog(stack, 'Catalog', { state: new RaskCatalogState(stack, 'State'), functionMode: 'per-operation' });
    // The wildcard acknowledgements name the nested stack's parameter for the bucket's ARN
    // (referenceto…Arn), not only the parent's SSM-parameter form: without them the synth fails.
    const nested = Template.fromStack(catalog.operations!).toJSON();
    expect(Object.keys(nested.Parameters ?? {}).some((p) => /^referenceto.*Registry.*Arn$/.test(p))).toBe(true);
    expect(countOf(Template.fromStack(stack), 'AWS::SSM::Parameter')).toBe(0);
  }, SYNTH_TIMEOUT);

  it('a bad prop fails the synth with the setting named, as the context does', () => {
    const stack = new Stack(newApp(), 'Bad');
    expect(() => new RaskCatalogState(stack, 'S1', { warehousePrefix: 'no-slash' })).toThrow(/warehousePrefix/);
    const state = new RaskCatalogState(stack, 'S2');
    expect(() => new RaskCatalog(stack, 'C1', { state, jwtIssuer: 'https://login.example.com/' })).toThrow(RaskConfigError);
    expect(() => new RaskCatalog(stack, 'C2', { state, dataMemoryMb: 64 })).toThrow(/dataMemoryMb must be an integer from 512/);
    expect(() => new RaskCatalog(stack, 'C3', { state, maintenanceSweepMinutes: 0 })).toThrow(/rask:maintenanceSweepMinutes/);
    expect(() => new RaskCatalog(stack, 'C4', { state, jobsTaskTier: true, jobsTaskCpu: 3 })).toThrow(/jobsTaskCpu/);
    // A misspelt prop from JavaScript (no type check) is refused, not ignored.
    expect(() => new RaskCatalog(stack, 'C5', { state, dataMemoryMB: 4096 } as never)).toThrow(/unknown setting rask:dataMemoryMB/);
  });
});
