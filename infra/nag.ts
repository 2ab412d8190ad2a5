import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Helpers for acknowledging cdk-nag (3.x) findings. Every acknowledgement carries a reason and is
 * as narrow as the rule allows: wildcard findings are acknowledged per resource string, so a
 * new, unintended wildcard still fails the synth.
 */

export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

/**
 * Acknowledges the AwsSolutions-IAM5 finding for one resource ARN containing `*` (for us always
 * "every object under a key prefix"). cdk-nag names the finding after the ARN with CloudFormation
 * references flattened to `<LogicalId.Attribute>` / `<LogicalId>`, so the same flattening is
 * applied to the resolved ARN here.
 */
export function acknowledgeWildcardResource(scope: IConstruct, arn: string, reason: string): void {
  const flat = flatten(Stack.of(scope).resolve(arn));
  acknowledge(scope, `AwsSolutions-IAM5[Resource::${flat}]`, reason);
}

/** Acknowledges AwsSolutions-IAM4 for one AWS managed policy (named by its policy path). */
export function acknowledgeManagedPolicy(scope: IConstruct, policyName: string, reason: string): void {
  acknowledge(scope, `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${policyName}]`, reason);
}

function flatten(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (typeof value === 'object' && value !== null) {
    const fn = value as Record<string, unknown>;
    if (Array.isArray(fn['Fn::Join'])) {
      const [separator, parts] = fn['Fn::Join'] as [string, unknown[]];
      return parts.map(flatten).join(separator);
    }
    if ('Fn::Sub' in fn) return flatten(fn['Fn::Sub']);
    if (Array.isArray(fn['Fn::GetAtt'])) {
      const [resource, attribute] = fn['Fn::GetAtt'] as [unknown, unknown];
      return `<${flatten(resource)}.${flatten(attribute)}>`;
    }
    if ('Fn::ImportValue' in fn) return flatten(fn['Fn::ImportValue']);
    if ('Ref' in fn) return `<${flatten(fn.Ref)}>`;
  }
  return JSON.stringify(value);
}
