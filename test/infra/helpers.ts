import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import type { RaskConfig } from '../../infra/config.js';
import { createRaskApp } from '../../infra/rask-app.js';

/**
 * Builds the app with bundling skipped (no esbuild, no npm install of the LanceDB layer) into a
 * temporary directory. Build once per test file: a synth takes a few seconds.
 */
export function synthRask(config: Partial<RaskConfig> = {}, options: { nag?: boolean } = {}) {
  const { app, stack, stateStack, config: resolved } = createRaskApp({
    context: { 'aws:cdk:bundling-stacks': [] },
    config,
    nag: options.nag ?? false,
    outdir: mkdtempSync(path.join(tmpdir(), 'rask-cdk-')),
  });
  const statelessTemplate = Template.fromStack(stack);
  const stateTemplate = Template.fromStack(stateStack);
  return { app, stack, stateStack, statelessTemplate, stateTemplate, template: mergedTemplate(stateTemplate, statelessTemplate), config: resolved };
}

/**
 * Both stacks as one template, with each `Fn::ImportValue` replaced by the value the stateful
 * stack exports under that name, and each SSM-typed parameter of the stateless stack by the value
 * of the stateful stack's SSM parameter of that name: the deployed catalog seen whole, for tests about what refers
 * to what (a role's S3 resources, a function's bucket variable). Tests about the split itself
 * read `stateTemplate` and `statelessTemplate`.
 */
export function mergedTemplate(state: Template, stateless: Template): Template {
  const stateJson = state.toJSON() as { Resources: Record<string, unknown>; Outputs?: Record<string, { Value: unknown; Export?: { Name: string } }> };
  const statelessJson = stateless.toJSON() as { Resources: Record<string, unknown>; Outputs?: Record<string, unknown> };
  const exports = new Map<string, unknown>();
  for (const output of Object.values(stateJson.Outputs ?? {})) if (output.Export) exports.set(output.Export.Name, output.Value);
  const ssmValues = new Map<string, unknown>();
  for (const r of Object.values(stateJson.Resources) as CfnResource[]) {
    if (r.Type === 'AWS::SSM::Parameter') ssmValues.set(r.Properties!.Name, r.Properties!.Value);
  }
  const parameters = ((statelessJson as { Parameters?: Record<string, { Type: string; Default?: string }> }).Parameters ?? {});
  const ssmParameter = (ref: unknown): unknown => {
    const p = typeof ref === 'string' ? parameters[ref] : undefined;
    return p?.Type.startsWith('AWS::SSM::Parameter::Value') && p.Default !== undefined && ssmValues.has(p.Default) ? ssmValues.get(p.Default) : undefined;
  };
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value && typeof value === 'object') {
      const v = value as Record<string, unknown>;
      if (typeof v['Fn::ImportValue'] === 'string' && exports.has(v['Fn::ImportValue'])) return exports.get(v['Fn::ImportValue']);
      if (ssmParameter(v.Ref) !== undefined) return ssmParameter(v.Ref);
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
    }
    return value;
  };
  return Template.fromJSON(
    {
      Resources: { ...stateJson.Resources, ...(resolve(statelessJson.Resources) as Record<string, unknown>) },
      Outputs: resolve(statelessJson.Outputs ?? {}),
    },
    { skipCyclicalDependenciesCheck: true },
  );
}

export type CfnResource = { Type: string; Properties?: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string };

export function resourcesOfType(template: Template, type: string): Record<string, CfnResource> {
  return template.findResources(type) as Record<string, CfnResource>;
}

/** The logical id of the only resource of `type` whose id starts with `prefix`. */
export function logicalId(template: Template, type: string, prefix: string): string {
  const ids = Object.keys(resourcesOfType(template, type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1) throw new Error(`expected one ${type} starting with ${prefix}, found ${ids.join(', ') || 'none'}`);
  return ids[0];
}

export interface PolicyStatementJson {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource?: unknown;
  Principal?: unknown;
  Condition?: unknown;
}

export const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Every statement of every identity policy (AWS::IAM::Policy and inline role policies), with its owner's logical id. */
export function identityStatements(template: Template): { owner: string; roles: string[]; statement: PolicyStatementJson }[] {
  const out: { owner: string; roles: string[]; statement: PolicyStatementJson }[] = [];
  for (const [id, policy] of Object.entries(resourcesOfType(template, 'AWS::IAM::Policy'))) {
    const roles = asArray(policy.Properties?.Roles).map((r: any) => r.Ref as string);
    for (const statement of policy.Properties?.PolicyDocument.Statement ?? []) out.push({ owner: id, roles, statement });
  }
  for (const [id, role] of Object.entries(resourcesOfType(template, 'AWS::IAM::Role'))) {
    for (const inline of role.Properties?.Policies ?? []) {
      for (const statement of inline.PolicyDocument.Statement ?? []) out.push({ owner: id, roles: [id], statement });
    }
  }
  return out;
}

/** A CloudFormation value rendered as a flat string (`{"Fn::GetAtt":["X","Arn"]}` → `<X.Arn>`), for pattern checks. */
export function flat(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(flat).join(',');
  if (value && typeof value === 'object') {
    const v = value as Record<string, any>;
    if (v['Fn::Join']) return (v['Fn::Join'][1] as unknown[]).map(flat).join(v['Fn::Join'][0]);
    if (v['Fn::GetAtt']) return `<${v['Fn::GetAtt'][0]}.${v['Fn::GetAtt'][1]}>`;
    if (v.Ref) return `<${v.Ref}>`;
  }
  return JSON.stringify(value);
}

/** One method of the API's OpenAPI body (infra/constructs/openapi.ts), as the template carries it. */
export interface DocumentMethod {
  readonly key: string;
  readonly operationId: string;
  readonly secured: boolean;
  readonly integration: { type: string; httpMethod: string; uri: unknown };
  /** The logical id of the function the integration URI names (`X` of `<X.Arn>`, or the nested stack output's name). */
  readonly functionRef: string;
}

/** The OpenAPI body of the template's only REST API. */
export function apiDocument(template: Template): Record<string, any> {
  const apis = Object.values(resourcesOfType(template, 'AWS::ApiGateway::RestApi'));
  if (apis.length !== 1 || !apis[0].Properties?.Body) throw new Error(`expected one spec-defined REST API, found ${apis.length}`);
  return apis[0].Properties.Body as Record<string, any>;
}

/** "METHOD /path" for every method of the API's document. */
export function documentMethods(template: Template): Map<string, DocumentMethod> {
  const methods = new Map<string, DocumentMethod>();
  for (const [path, item] of Object.entries(apiDocument(template).paths as Record<string, Record<string, any>>)) {
    for (const [verb, op] of Object.entries(item)) {
      const key = `${verb.toUpperCase()} ${path}`;
      const integration = op['x-amazon-apigateway-integration'];
      const uri = flat(integration.uri);
      methods.set(key, {
        key,
        operationId: op.operationId,
        secured: (op.security as Record<string, unknown>[]).some((s) => Object.keys(s).length > 0),
        integration,
        functionRef: /<([A-Za-z0-9.]+?)(\.Arn)?>\/invocations$/.exec(uri)?.[1] ?? uri,
      });
    }
  }
  return methods;
}
