import { CfnElement, Names, Stack, Validations } from 'aws-cdk-lib';
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
  const stack = Stack.of(scope);
  const resolved = stack.resolve(arn);
  acknowledge(scope, `AwsSolutions-IAM5[Resource::${flatten(resolved)}]`, reason);
  // In a nested stack, a value of the parent's (the state's SSM parameters, or its bucket's ARN
  // when the state is in the same stack) arrives as a nested-stack parameter that CDK names at
  // synth, after this call: name it the same way here (aws-cdk-lib's "reference-to-<unique id>"
  // and `Ref` or the attribute), so the finding cdk-nag reports on the nested template is the one
  // acknowledged.
  const parent = stack.nestedStackParent;
  if (parent) {
    const nested = flatten(resolved, (logicalId, attribute) => nestedReference(parent, logicalId, attribute));
    if (nested !== flatten(resolved)) acknowledge(scope, `AwsSolutions-IAM5[Resource::${nested}]`, reason);
  }
}

/** The nested-stack parameter CDK makes for a `Ref` (or `Fn::GetAtt` of `attribute`) to `logicalId` of the parent stack, if it is one. */
function nestedReference(parent: Stack, logicalId: string, attribute = 'Ref'): string | undefined {
  const element = parent.node.findAll().find((c): c is CfnElement => CfnElement.isCfnElement(c) && Stack.of(c) === parent && parent.resolve(c.logicalId) === logicalId);
  return element ? `referenceto${Names.nodeUniqueId(element.node)}${attribute}`.replace(/[^A-Za-z0-9]/g, '') : undefined;
}

/** Acknowledges AwsSolutions-IAM4 for one AWS managed policy (named by its policy path). */
export function acknowledgeManagedPolicy(scope: IConstruct, policyName: string, reason: string): void {
  acknowledge(scope, `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${policyName}]`, reason);
}

function flatten(value: unknown, parentRef?: (logicalId: string, attribute?: string) => string | undefined): string {
  const flat = (v: unknown) => flatten(v, parentRef);
  if (value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (typeof value === 'object' && value !== null) {
    const fn = value as Record<string, unknown>;
    if (Array.isArray(fn['Fn::Join'])) {
      const [separator, parts] = fn['Fn::Join'] as [string, unknown[]];
      return parts.map(flat).join(separator);
    }
    if ('Fn::Sub' in fn) return flat(fn['Fn::Sub']);
    if (Array.isArray(fn['Fn::GetAtt'])) {
      const [resource, attribute] = fn['Fn::GetAtt'] as [unknown, unknown];
      const fromParent = typeof resource === 'string' && typeof attribute === 'string' ? parentRef?.(resource, attribute) : undefined;
      return fromParent ? `<${fromParent}>` : `<${flat(resource)}.${flat(attribute)}>`;
    }
    if ('Fn::ImportValue' in fn) return flat(fn['Fn::ImportValue']);
    if ('Ref' in fn) return `<${(typeof fn.Ref === 'string' && parentRef?.(fn.Ref)) || flat(fn.Ref)}>`;
  }
  return JSON.stringify(value);
}
