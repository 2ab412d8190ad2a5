/**
 * The scheduled maintenance passes in the template: one function each on its own rule with its
 * own cadence (configurable by context), least-privilege roles that widen only when repair /
 * delete is enabled by context, a failure destination and an error alarm each.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { build } from 'esbuild';
import { esbuildOptions, externalModules } from '../../infra/bundling.js';
import { forbiddenInputs } from '../../infra/measure-bundle.js';
import { describe, expect, it } from 'vitest';
import { MAINTENANCE_PASSES } from '../../infra/constructs/maintenance.js';
import { createRaskApp } from '../../infra/rask-app.js';
import { asArray, flat, identityStatements, logicalId, mergedTemplate, resourcesOfType } from './helpers.js';

/** Both stacks as one template (imports resolved to the stateful stack's resources). */
function synth(context: Record<string, unknown> = {}): Template {
  const { stack, stateStack } = createRaskApp({
    context: { 'aws:cdk:bundling-stacks': [], ...context },
    nag: false,
    outdir: mkdtempSync(path.join(tmpdir(), 'rask-cdk-')),
  });
  return mergedTemplate(Template.fromStack(stateStack), Template.fromStack(stack));
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const defaults = synth();

/** The pieces of one pass in a template. */
function pass(t: Template, name: string) {
  const fn = logicalId(t, 'AWS::Lambda::Function', `Maintenance${cap(name)}Function`);
  const role = logicalId(t, 'AWS::IAM::Role', `Maintenance${cap(name)}Role`);
  const rules = Object.values(resourcesOfType(t, 'AWS::Events::Rule')).filter((r) => JSON.stringify(r.Properties!.Targets).includes(fn));
  const statements = identityStatements(t).filter((s) => s.roles.includes(role));
  const actionsOn = (match: (resource: string) => boolean) =>
    statements.filter((s) => asArray(s.statement.Resource).map(flat).some(match)).flatMap((s) => asArray(s.statement.Action));
  return { fn, role, rules, statements, actionsOn };
}

describe('maintenance passes', () => {
  it('deploys all four passes: sweep, index build, reconcile and the orphan scan', () => {
    expect(MAINTENANCE_PASSES.map((p) => p.name).sort()).toEqual(['index', 'orphans', 'reconcile', 'sweep']);
  });

  it('runs each pass on its own rule, with distinct default cadences and no retries', () => {
    const expressions: Record<string, string> = {};
    for (const { name } of MAINTENANCE_PASSES) {
      const { fn, rules } = pass(defaults, name);
      expect(rules, name).toHaveLength(1);
      expressions[name] = rules[0].Properties!.ScheduleExpression;
      expect(rules[0].Properties!.Targets[0].RetryPolicy).toMatchObject({ MaximumRetryAttempts: 0 });
      const props = resourcesOfType(defaults, 'AWS::Lambda::Function')[fn].Properties!;
      expect(props).toMatchObject({ Timeout: 900, Runtime: 'nodejs22.x' });
      // No pass opens a dataset (sweep and index build queue per-table jobs): arm64, no LanceDB layer.
      expect(props.Architectures, name).toEqual(['arm64']);
      expect(props.Layers, name).toBeUndefined();
      expect(props.MemorySize, name).toBe(name === 'orphans' ? 1024 : 512);
    }
    expect(expressions).toEqual({ index: 'rate(5 minutes)', reconcile: 'rate(15 minutes)', sweep: 'rate(1 hour)', orphans: 'rate(1 day)' });
    expect(new Set(Object.values(expressions)).size).toBe(MAINTENANCE_PASSES.length);
  });

  it('takes cadences, repair and delete from context, and refuses a bad value', () => {
    const t = synth({
      'rask:maintenanceReconcileMinutes': '30',
      'rask:maintenanceOrphansMinutes': 720,
      'rask:maintenanceSweepMinutes': '120',
      'rask:maintenanceIndexMinutes': 10,
    });
    expect(pass(t, 'reconcile').rules[0].Properties!.ScheduleExpression).toBe('rate(30 minutes)');
    expect(pass(t, 'orphans').rules[0].Properties!.ScheduleExpression).toBe('rate(12 hours)');
    expect(pass(t, 'sweep').rules[0].Properties!.ScheduleExpression).toBe('rate(2 hours)');
    expect(pass(t, 'index').rules[0].Properties!.ScheduleExpression).toBe('rate(10 minutes)');
    expect(() => synth({ 'rask:maintenanceSweepMinutes': 'hourly' })).toThrow(/rask:maintenanceSweepMinutes must be a whole number/);
    expect(() => synth({ 'rask:maintenanceIndexMemoryMb': '64' })).toThrow(/rask:maintenanceIndexMemoryMb must be a whole number of MB from 128 to 10240/);
    expect(() => synth({ 'rask:maintenanceOrphansDelete': 'yes' })).toThrow(/rask:maintenanceOrphansDelete must be true or false/);
  });

  it('takes each pass\'s memory from context', () => {
    const t = synth({ 'rask:maintenanceSweepMemoryMb': '1024', 'rask:maintenanceIndexMemoryMb': 768 });
    const memory = (name: string) => resourcesOfType(t, 'AWS::Lambda::Function')[pass(t, name).fn].Properties!.MemorySize;
    expect([memory('sweep'), memory('index'), memory('reconcile'), memory('orphans')]).toEqual([1024, 768, 512, 1024]);
  });

  it('sends failed invocations to a queue of their own and alarms on errors, for each pass', () => {
    const queues = new Set<string>();
    for (const { name } of MAINTENANCE_PASSES) {
      const { fn } = pass(defaults, name);
      const config = Object.values(resourcesOfType(defaults, 'AWS::Lambda::EventInvokeConfig')).find((c) => c.Properties!.FunctionName.Ref === fn)!;
      expect(config.Properties).toMatchObject({ MaximumRetryAttempts: 0 });
      const destination = flat(config.Properties!.DestinationConfig.OnFailure.Destination);
      expect(destination).toMatch(new RegExp(`^<Maintenance${cap(name)}Failures[A-Z0-9]+\\.Arn>$`));
      queues.add(destination);
      const alarms = Object.values(resourcesOfType(defaults, 'AWS::CloudWatch::Alarm')).filter(
        (a) => a.Properties!.MetricName === 'Errors' && JSON.stringify(a.Properties!.Dimensions).includes(fn),
      );
      expect(alarms, name).toHaveLength(1);
      // The role may send to its failure queue (CDK adds it) and nothing else of SQS.
      expect(pass(defaults, name).statements.flatMap((s) => asArray(s.statement.Action)).filter((a) => a.startsWith('sqs:'))).toEqual(
        expect.arrayContaining(['sqs:SendMessage']),
      );
    }
    expect(queues.size).toBe(MAINTENANCE_PASSES.length);
  });

  it('keeps reconcile and the orphan scan read-only by default: they write only their own reports', () => {
    for (const name of ['reconcile', 'orphans']) {
      const { statements, actionsOn } = pass(defaults, name);
      const writes = statements.filter((s) => asArray(s.statement.Action).some((a) => /^s3:(Put|Delete)/.test(a)));
      expect(writes.flatMap((s) => asArray(s.statement.Resource).map(flat)).sort(), name).toEqual([
        // The registry bucket lives in the stateful stack: its ARN arrives through the SSM parameter that stack writes.
        expect.stringMatching(/^(<StorageRegistry[A-Z0-9]+\.Arn>|<SsmParameterValue[A-Za-z0-9]*RegistryBucketArn[A-Za-z0-9]*>)\/registry\/changes\/\*$/),
        expect.stringMatching(new RegExp(`^(<StorageRegistry[A-Z0-9]+\\.Arn>|<SsmParameterValue[A-Za-z0-9]*RegistryBucketArn[A-Za-z0-9]*>)/registry/reports/${name}/\\*$`)),
      ]);
      expect(actionsOn((r) => r.includes('/warehouse/'))).toEqual(['s3:GetObject']);
      expect(actionsOn((r) => r.includes('WorkQueueTable')).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:Query']);
      expect(statements.flatMap((s) => asArray(s.statement.Action)).some((a) => a.startsWith('sts:') || a.startsWith('lambda:'))).toBe(false);
    }
  });

  it('lets sweep and index build only walk and enqueue: registry read, own reports and pending markers, put jobs; no warehouse write', () => {
    const registryArn = '(<StorageRegistry[A-Z0-9]+\\.Arn>|<SsmParameterValue[A-Za-z0-9]*RegistryBucketArn[A-Za-z0-9]*>)';
    for (const name of ['sweep', 'index']) {
      const { statements, actionsOn } = pass(defaults, name);
      const writes = statements.filter((s) => asArray(s.statement.Action).some((a) => /^s3:(Put|Delete|Abort)/.test(a)));
      expect(writes.flatMap((s) => asArray(s.statement.Resource).map(flat)).sort(), name).toEqual([
        expect.stringMatching(new RegExp(`^${registryArn}/registry/changes/\\*$`)),
        expect.stringMatching(new RegExp(`^${registryArn}/registry/p/\\*/maint/pending/${name}/\\*$`)),
        expect.stringMatching(new RegExp(`^${registryArn}/registry/reports/${name}/\\*$`)),
      ]);
      expect(actionsOn((r) => /\/pending\//.test(r)), name).toEqual(['s3:PutObject']);
      expect(actionsOn((r) => /\/registry\/\*$/.test(r)), name).toEqual(['s3:GetObject']);
      expect(actionsOn((r) => r.includes('/warehouse/')), name).toEqual(['s3:GetObject']);
      expect(actionsOn((r) => r.includes('WorkQueueTable')).sort(), name).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
      expect(statements.filter((s) => asArray(s.statement.Resource).map(flat).some((r) => /WorkQueueTable.*\/index\//.test(r))), name).toEqual([]);
      expect(statements.flatMap((s) => asArray(s.statement.Action)).some((a) => a.startsWith('sts:') || a.startsWith('lambda:') || a.startsWith('events:')), name).toBe(false);
    }
  });

  it('lets every pass append its completion event to the change log: PutObject on changes/ only, never read back, delete or put on the bus', () => {
    for (const name of MAINTENANCE_PASSES.map((p) => p.name)) {
      const { statements, actionsOn } = pass(defaults, name);
      expect(actionsOn((r) => /\/registry\/changes\/\*$/.test(r)), name).toEqual(['s3:PutObject']);
      // The relay takes the log to the bus: no pass calls EventBridge itself.
      expect(statements.flatMap((s) => asArray(s.statement.Action)).some((a) => a.startsWith('events:')), name).toBe(false);
    }
  });

  it('gives the jobs function, which runs the per-table sweep and index jobs, warehouse read-write-delete and the work queue', () => {
    const jobsRole = logicalId(defaults, 'AWS::IAM::Role', 'FunctionsJobsRole');
    const statements = identityStatements(defaults).filter((s) => s.roles.includes(jobsRole));
    const actionsOn = (match: (resource: string) => boolean) =>
      statements.filter((s) => asArray(s.statement.Resource).map(flat).some(match)).flatMap((s) => asArray(s.statement.Action));
    expect(actionsOn((r) => /\/warehouse\/\*$/.test(r))).toEqual(expect.arrayContaining(['s3:GetObject', 's3:PutObject', 's3:DeleteObject']));
    expect(actionsOn((r) => /\/registry\/\*$/.test(r))).toEqual(expect.arrayContaining(['s3:GetObject', 's3:PutObject', 's3:DeleteObject']));
    expect(actionsOn((r) => r.includes('WorkQueueTable'))).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:UpdateItem']));
    const jobs = resourcesOfType(defaults, 'AWS::Lambda::Function')[logicalId(defaults, 'AWS::Lambda::Function', 'FunctionsJobsFunction')].Properties!;
    expect(jobs.Layers).toHaveLength(1);
  });

  it('widens exactly what repair and delete need when context enables them', () => {
    const t = synth({ 'rask:maintenanceReconcileRepair': 'true', 'rask:maintenanceOrphansDelete': true });
    const reconcile = pass(t, 'reconcile');
    expect(reconcile.actionsOn((r) => /\/registry\/\*$/.test(r))).toEqual(expect.arrayContaining(['s3:PutObject', 's3:DeleteObject']));
    expect(reconcile.actionsOn((r) => r.includes('WorkQueueTable'))).toContain('dynamodb:PutItem');
    // Repair never deletes table bytes itself (purges run in the jobs function).
    expect(reconcile.actionsOn((r) => r.includes('/warehouse/'))).toEqual(['s3:GetObject']);
    const orphans = pass(t, 'orphans');
    expect(orphans.actionsOn((r) => r.includes('/warehouse/')).sort()).toEqual(['s3:DeleteObject', 's3:GetObject']);
    expect(orphans.actionsOn((r) => /\/registry\/\*$/.test(r))).toEqual(['s3:GetObject']);
    const env = (name: string) =>
      resourcesOfType(t, 'AWS::Lambda::Function')[pass(t, name).fn].Properties!.Environment.Variables as Record<string, string>;
    expect(env('reconcile').RASK_RECONCILE_REPAIR).toBe('true');
    expect(env('orphans').RASK_ORPHANS_DELETE).toBe('true');
  });

  it('bundles every pass without LanceDB, Arrow or the data plane, and leaves nothing to a layer', async () => {
    for (const { kind } of MAINTENANCE_PASSES) {
      const result = await build({ ...esbuildOptions(kind, `/tmp/rask-${kind}`), write: false, metafile: true, logLevel: 'silent' });
      const inputs = Object.keys(result.metafile!.inputs);
      expect(inputs.some((i) => i.includes('lib/maintenance/')), kind).toBe(true);
      expect(inputs.filter((i) => i.includes('@lancedb') || i.includes('apache-arrow')), kind).toEqual([]);
      expect(forbiddenInputs(result.metafile!), kind).toEqual([]);
      // lib/data loads LanceDB with createRequire, which a metafile does not show: no module of it may be there.
      expect(inputs.filter((i) => (i.startsWith('lib/data/') || i.startsWith('lib/adapters/lance/'))), kind).toEqual([]);
      expect(externalModules(kind), kind).toEqual([]);
    }
  }, 60_000);
});
