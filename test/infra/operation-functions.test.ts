/**
 * `rask:functionMode=per-operation` (issue 13, item 5): one function per operation, each bundle
 * holding only its handler module, each role derived from the operation table — a read cannot
 * write or delete, a write has what it needs — and every API method routed to its own function.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { accessOf, INSPECTING_OPERATIONS } from '../../infra/constructs/operation-functions.js';
import { operationEntrySource } from '../../infra/operation-bundles.js';
import { HANDLER_MODULES, handlerModuleOf, perOperationDefs } from '../../infra/operation-entries.js';
import { createRaskApp } from '../../infra/rask-app.js';
import { allHandlers } from '../../lib/operations/handlers-all.js';
import { ALL_OPERATIONS, OPERATIONS_BY_ID } from '../../lib/contract/operations.js';
import { evaluate, type Statement } from '../deploy/iam.js';
import { asArray, documentMethods, flat, identityStatements, resourcesOfType, synthRask } from './helpers.js';

describe('the handler index the per-operation entries are generated from', () => {
  it('names, for every implemented operation, the one module whose map holds its handler', async () => {
    for (const module of HANDLER_MODULES) {
      const imported = (await import(path.join('../..', module.file))) as Record<string, Record<string, unknown>>;
      for (const op of Object.keys(imported[module.exportName])) expect(handlerModuleOf(op), op).toEqual(module);
    }
    const implemented = ALL_OPERATIONS.filter((o) => allHandlers[o.operationId as keyof typeof allHandlers]).map((o) => o.operationId);
    expect(perOperationDefs().map((o) => o.operationId).sort()).toEqual(implemented.sort());
  });

  it('an entry imports only its operation\'s handler module and passes only its handler', () => {
    const source = operationEntrySource(OPERATIONS_BY_ID.get('DescribeTable')!);
    expect(source).toContain('handlers-table.ts');
    expect(source).toContain('metaOperationHandler("DescribeTable", { ["DescribeTable"]: handlers["DescribeTable"] })');
    expect(source.match(/^import /gm)).toHaveLength(2);
    expect(operationEntrySource(OPERATIONS_BY_ID.get('QueryTable')!)).toContain('api-operation-data.ts');
  });

  it('reads are the *:read actions and project:list', () => {
    expect(accessOf('table:read')).toBe('read');
    expect(accessOf('project:list')).toBe('read');
    expect(accessOf('table:drop')).toBe('write');
    expect(accessOf('namespace:create')).toBe('write');
  });
});

describe('per-operation mode, synthesized from context', () => {
  let built: ReturnType<typeof createRaskApp>;
  let ops: Template;
  let parent: Template;
  beforeAll(() => {
    built = createRaskApp({
      context: { 'aws:cdk:bundling-stacks': [], 'rask:functionMode': 'per-operation' },
      nag: false,
      outdir: mkdtempSync(path.join(tmpdir(), 'rask-cdk-')),
    });
    ops = Template.fromStack(built.stack.operations!);
    parent = Template.fromStack(built.stack);
  }, 120_000);

  const fnOf = (op: string) => {
    const entries = Object.entries(resourcesOfType(ops, 'AWS::Lambda::Function')).filter(([id]) => id.startsWith(op) && id.slice(op.length).startsWith('Function'));
    expect(entries, op).toHaveLength(1);
    return { id: entries[0][0], fn: entries[0][1] };
  };
  /** Actions the operation's role is allowed, with their resources flattened. */
  const allowed = (op: string) => {
    const role = (fnOf(op).fn.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    return identityStatements(ops)
      .filter((s) => s.roles.includes(role) && s.statement.Effect === 'Allow')
      .flatMap((s) => asArray(s.statement.Action).map((a) => ({ action: a, resource: flat(s.statement.Resource) })));
  };
  const actions = (op: string) => new Set(allowed(op).map((a) => a.action));
  /** Write actions the role allows without the condition that confines it to the rate buckets. */
  const writesOutsideRateBuckets = (op: string) => {
    const role = (fnOf(op).fn.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    return identityStatements(ops)
      .filter((s) => s.roles.includes(role) && s.statement.Effect === 'Allow')
      .filter((s) => JSON.stringify(s.statement.Condition ?? {}) !== JSON.stringify({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['rate/*'] } }))
      .flatMap((s) => asArray(s.statement.Action))
      .filter((a) => /^(s3|dynamodb):.*(Put|Delete|Update)/.test(String(a)));
  };

  it('deploys one function per implemented operation, in a nested stack, with the grouped ones kept', () => {
    expect(Object.keys(resourcesOfType(ops, 'AWS::Lambda::Function'))).toHaveLength(perOperationDefs().length);
    expect(Object.keys(resourcesOfType(parent, 'AWS::CloudFormation::Stack'))).toHaveLength(1);
    expect(Object.keys(parent.toJSON().Resources).length).toBeLessThan(500);
    expect(Object.keys(ops.toJSON().Resources).length).toBeLessThan(500);
    // Data operations carry the layer, metadata operations do not.
    expect(fnOf('QueryTable').fn.Properties!.Layers).toHaveLength(1);
    expect(fnOf('DescribeTable').fn.Properties!.Layers).toBeUndefined();
    expect(fnOf('DescribeTable').fn.Properties!.Architectures).toEqual(['arm64']);
  });

  it('DescribeTable\'s role reads and vends but cannot write or delete anything', () => {
    const a = actions('DescribeTable');
    for (const forbidden of ['s3:DeleteObject', 's3:PutObject', 's3:AbortMultipartUpload', 'dynamodb:PutItem', 'dynamodb:DeleteItem', 'events:PutEvents']) {
      expect(a.has(forbidden), forbidden).toBe(false);
    }
    // Its one update is the rate buckets' (confined to their items; evaluated below).
    expect(writesOutsideRateBuckets('DescribeTable')).toEqual([]);
    for (const needed of ['s3:GetObject', 's3:ListBucket', 'sts:AssumeRole', 'lambda:InvokeFunction', 'dynamodb:GetItem']) expect(a.has(needed), needed).toBe(true);
    expect(INSPECTING_OPERATIONS.has('DescribeTable')).toBe(true);
  });

  it('a write has what it needs: DropTable deletes objects, InsertIntoTable writes with multipart, AlterTransaction updates items', () => {
    expect(actions('DropTable').has('s3:DeleteObject')).toBe(true);
    for (const a of ['s3:PutObject', 's3:AbortMultipartUpload', 's3:DeleteObject']) expect(actions('InsertIntoTable').has(a), a).toBe(true);
    expect(actions('AlterTransaction').has('dynamodb:UpdateItem')).toBe(true);
    // DescribeTransaction updates only its rate buckets, never a job.
    expect(writesOutsideRateBuckets('DescribeTransaction')).toEqual([]);
  });

  it('a read operation may update its shared rate buckets and no other item of the queue table (IAM evaluated)', () => {
    const role = (fnOf('DescribeTable').fn.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const statements = identityStatements(ops)
      .filter((s) => s.roles.includes(role))
      .map(({ statement }) => ({ ...statement, Resource: asArray(statement.Resource).map(flat) }) as Statement);
    const table = statements.flatMap((s) => asArray(s.Resource as string[])).find((r) => /WorkQueueTable/.test(r) && !r.includes('/index/'));
    expect(table).toBeDefined();
    const update = (pk: string) => evaluate(statements, { action: 'dynamodb:UpdateItem', resource: table!, context: { 'dynamodb:LeadingKeys': pk } }).allowed;
    expect(update('rate/principal:alice')).toBe(true);
    expect(update('jobs/default')).toBe(false);
    expect(evaluate(statements, { action: 'dynamodb:PutItem', resource: table!, context: { 'dynamodb:LeadingKeys': 'rate/principal:alice' } }).allowed).toBe(false);
    expect(evaluate(statements, { action: 'dynamodb:DeleteItem', resource: table!, context: { 'dynamodb:LeadingKeys': 'rate/principal:alice' } }).allowed).toBe(false);
  });

  it('read operations run read-only (RASK_READ_ONLY=true), write operations do not carry the flag', () => {
    const envOf = (op: string) => (fnOf(op).fn.Properties!.Environment as { Variables: Record<string, unknown> }).Variables;
    let reads = 0;
    for (const op of perOperationDefs()) {
      const env = envOf(op.operationId);
      if (accessOf(op.action) === 'read') {
        reads++;
        expect(env.RASK_READ_ONLY, op.operationId).toBe('true');
        // The role matches: nothing that writes the registry or the queue (the rate buckets' one
        // update is confined to their items, below).
        expect(writesOutsideRateBuckets(op.operationId), op.operationId).toEqual([]);
      } else {
        expect(env, op.operationId).not.toHaveProperty('RASK_READ_ONLY');
      }
    }
    expect(reads).toBeGreaterThan(20);
    for (const op of ['DescribeTable', 'ListTables', 'ListAllTables', 'DescribeNamespace', 'QueryTable']) expect(envOf(op).RASK_READ_ONLY, op).toBe('true');
    for (const op of ['RenameTable', 'DropNamespace', 'InsertIntoTable']) expect(envOf(op), op).not.toHaveProperty('RASK_READ_ONLY');
  });

  it('every operation function answers its deadline before its Lambda timeout (RASK_COMMIT_DEADLINE_MS = timeout − 3 s)', () => {
    for (const op of perOperationDefs()) {
      const { Timeout, Environment } = fnOf(op.operationId).fn.Properties as { Timeout: number; Environment: { Variables: Record<string, unknown> } };
      expect(Number(Environment.Variables.RASK_COMMIT_DEADLINE_MS), op.operationId).toBe(Timeout * 1000 - 3000);
    }
  });

  it('only table operations may vend, only DescribeTable may invoke the data function', () => {
    const roles = resourcesOfType(ops, 'AWS::IAM::Role');
    for (const op of perOperationDefs()) {
      const a = actions(op.operationId);
      expect(a.has('sts:AssumeRole'), op.operationId).toBe(op.action.startsWith('table:'));
      expect(a.has('lambda:InvokeFunction'), op.operationId).toBe(op.operationId === 'DescribeTable');
      if (accessOf(op.action) === 'read') expect(a.has('s3:DeleteObject') || a.has('s3:PutObject'), op.operationId).toBe(false);
      const { Role, Environment } = fnOf(op.operationId).fn.Properties as { Role: { 'Fn::GetAtt': [string] }; Environment: { Variables: Record<string, unknown> } };
      const vendingRef = Environment.Variables.RASK_VENDING_ROLE_ARN as { 'Fn::GetAtt': [string] } | undefined;
      expect(vendingRef !== undefined, op.operationId).toBe(op.action.startsWith('table:'));
      if (!vendingRef) continue;
      // Its own vending role, which trusts exactly this function's role and nothing else.
      const trust = roles[vendingRef['Fn::GetAtt'][0]]!.Properties!.AssumeRolePolicyDocument as { Statement: { Principal: unknown; Condition?: unknown }[] };
      expect(trust.Statement.map((st) => st.Principal), op.operationId).toEqual([{ AWS: { 'Fn::GetAtt': [Role['Fn::GetAtt'][0], 'Arn'] } }]);
      expect(trust.Statement.some((st) => st.Condition), op.operationId).toBe(false);
    }
    expect(actions('CreateNamespace').has('s3:PutObject')).toBe(true);
    expect(actions('ListNamespaces').has('s3:PutObject')).toBe(false);
  });

  it('routes every method of an implemented operation to its own function', () => {
    const byOperation = new Map<string, string[]>();
    for (const m of documentMethods(parent).values()) {
      byOperation.set(m.operationId, [...(byOperation.get(m.operationId) ?? []), JSON.stringify(m.integration.uri)]);
    }
    for (const op of perOperationDefs()) {
      const uris = byOperation.get(op.operationId)!;
      expect(uris.length, op.operationId).toBe(op.methods.length);
      // The URI names the nested stack's output for this operation's function, and no other.
      for (const uri of uris) expect(uri, op.operationId).toMatch(new RegExp(`Operations${op.operationId}Function[0-9A-F]{8}Arn`));
    }
    // Operations without a handler (they answer Unsupported) stay on their bundle's function.
    expect(byOperation.get('BatchCommitTables')![0]).toContain('FunctionsMetaFunction');
  });

  it('lets API Gateway invoke each function once, by a source ARN pattern of this API (not one permission per method)', () => {
    const byApi = Object.values(resourcesOfType(parent, 'AWS::Lambda::Permission')).filter((p) => p.Properties!.Principal === 'apigateway.amazonaws.com');
    const targets = byApi.map((p) => JSON.stringify(p.Properties!.FunctionName));
    expect(new Set(targets).size, 'one permission per function').toBe(targets.length);
    // Every per-operation function, the two bundle functions (unsupported operations, the project proxy, the console) and the authorizer.
    expect(byApi.length).toBe(perOperationDefs().length + 3);
    for (const op of perOperationDefs()) expect(targets.some((t) => new RegExp(`Operations${op.operationId}Function[0-9A-F]{8}Arn`).test(t)), op.operationId).toBe(true);
    for (const p of byApi) expect(flat(p.Properties!.SourceArn)).toMatch(/:<Api[A-Z0-9]+>\/(\*\/\*\/\*|authorizers\/\*)$/);
    expect(Object.keys(resourcesOfType(ops, 'AWS::Lambda::Permission'))).toEqual([]);
  });

  it('every vending role trusts named roles only: no account principal, no tag or other condition', () => {
    const vendingRoles = [parent, ops].flatMap((t) =>
      Object.entries(resourcesOfType(t, 'AWS::IAM::Role')).filter(([, r]) => String(r.Properties!.Description ?? '').startsWith('rask credential vending')),
    );
    expect(vendingRoles.length).toBe(1 + perOperationDefs().filter((o) => o.action.startsWith('table:')).length);
    for (const [id, role] of vendingRoles) {
      const { Statement } = role.Properties!.AssumeRolePolicyDocument as { Statement: { Principal: { AWS?: unknown }; Condition?: unknown }[] };
      for (const st of Statement) {
        expect(st.Condition, id).toBeUndefined();
        for (const p of asArray(st.Principal.AWS)) expect(JSON.stringify(p), id).toMatch(/^\{"Fn::GetAtt":\["[A-Za-z0-9]+Role[A-Za-z0-9]*","Arn"\]\}$/);
      }
    }
  });

  it('passes cdk-nag with no unacknowledged finding', () => {
    const report = new AwsSolutionsChecks().validateScope(built.app);
    expect(report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });
});

describe('grouped mode (default)', () => {
  it('deploys no per-operation functions', () => {
    const b = synthRask();
    expect(b.stack.operations).toBeUndefined();
    expect(Object.keys(resourcesOfType(b.statelessTemplate, 'AWS::CloudFormation::Stack'))).toEqual([]);
  });

  it('no grouped function runs read-only: they serve writes and repair what reads meet', () => {
    const b = synthRask();
    const fns = Object.entries(resourcesOfType(b.statelessTemplate, 'AWS::Lambda::Function'));
    expect(fns.length).toBeGreaterThan(0);
    for (const [id, fn] of fns) {
      const env = (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      expect(env, id).not.toHaveProperty('RASK_READ_ONLY');
    }
  });
});
