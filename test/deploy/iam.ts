/**
 * A small evaluator of IAM's identity-policy logic, enough to tell whether a recorded AWS call
 * would be allowed by a synthesized role: an explicit Deny wins, otherwise some Allow must match
 * action, resource and every condition; with a session policy both must allow. Wildcards `*`
 * and `?` in actions (case-insensitive) and resources; NotAction / NotResource; the condition
 * operators our templates use. An operator it does not know fails loudly rather than guessing.
 */
import type { Assembly } from './assembly.js';

export interface Statement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | readonly string[];
  readonly NotAction?: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly NotResource?: string | readonly string[];
  readonly Principal?: unknown;
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, string | readonly string[]>>>>;
}

export interface Request {
  readonly action: string;
  readonly resource: string;
  readonly context: Readonly<Record<string, string>>;
}

export type Decision =
  | { readonly allowed: true; readonly by: Statement }
  | { readonly allowed: false; readonly reason: 'explicit-deny'; readonly by: Statement }
  | { readonly allowed: false; readonly reason: 'no-allow' };

const list = (v: string | readonly string[] | undefined): readonly string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v);

function wildcard(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
}

function matchesAction(s: Statement, action: string): boolean {
  if (s.Action !== undefined) return list(s.Action).some((p) => wildcard(p, action, true));
  if (s.NotAction !== undefined) return !list(s.NotAction).some((p) => wildcard(p, action, true));
  return false;
}

function matchesResource(s: Statement, resource: string): boolean {
  if (s.Resource !== undefined) return list(s.Resource).some((p) => wildcard(p, resource, false));
  if (s.NotResource !== undefined) return !list(s.NotResource).some((p) => wildcard(p, resource, false));
  // Trust and resource policies may omit Resource: they apply to their own resource.
  return true;
}

function matchesConditions(s: Statement, context: Readonly<Record<string, string>>): boolean {
  for (const [rawOperator, block] of Object.entries(s.Condition ?? {})) {
    const operator = rawOperator.replace(/^(ForAnyValue|ForAllValues):/, '').replace(/IfExists$/, '');
    const ifExists = rawOperator.endsWith('IfExists');
    for (const [key, expected] of Object.entries(block)) {
      const actual = Object.entries(context).find(([k]) => k.toLowerCase() === key.toLowerCase())?.[1];
      const values = list(expected);
      if (operator === 'Null') {
        if ((actual === undefined) !== (values[0] === 'true')) return false;
        continue;
      }
      const negated = operator.includes('Not');
      if (actual === undefined) {
        if (ifExists || negated) continue;
        return false;
      }
      let hit: boolean;
      switch (operator) {
        case 'StringEquals':
        case 'StringNotEquals':
        case 'ArnEquals':
        case 'ArnNotEquals':
          hit = values.includes(actual);
          break;
        case 'StringEqualsIgnoreCase':
        case 'StringNotEqualsIgnoreCase':
          hit = values.some((v) => v.toLowerCase() === actual.toLowerCase());
          break;
        case 'StringLike':
        case 'StringNotLike':
        case 'ArnLike':
        case 'ArnNotLike':
          hit = values.some((v) => wildcard(v, actual, false));
          break;
        case 'Bool':
          hit = values.includes(actual);
          break;
        case 'NumericLessThanEquals':
          hit = values.some((v) => Number(actual) <= Number(v));
          break;
        case 'NumericLessThan':
          hit = values.some((v) => Number(actual) < Number(v));
          break;
        case 'NumericGreaterThanEquals':
          hit = values.some((v) => Number(actual) >= Number(v));
          break;
        default:
          throw new Error(`IAM evaluator: condition operator ${rawOperator} is not supported`);
      }
      if (hit === negated) return false;
    }
  }
  return true;
}

const applies = (s: Statement, r: Request) => matchesAction(s, r.action) && matchesResource(s, r.resource) && matchesConditions(s, r.context);

/** One policy set's verdict: explicit deny, allow, or no allow. */
export function evaluate(statements: readonly Statement[], request: Request): Decision {
  const deny = statements.find((s) => s.Effect === 'Deny' && applies(s, request));
  if (deny) return { allowed: false, reason: 'explicit-deny', by: deny };
  const allow = statements.find((s) => s.Effect === 'Allow' && applies(s, request));
  return allow ? { allowed: true, by: allow } : { allowed: false, reason: 'no-allow' };
}

/** Identity policies, narrowed by a session policy when one is given (both must allow). */
export function evaluateWithSession(identity: readonly Statement[], session: readonly Statement[] | undefined, request: Request): Decision {
  const first = evaluate(identity, request);
  if (!first.allowed || session === undefined) return first;
  const second = evaluate(session, request);
  return second.allowed ? first : second;
}

const statementsOf = (document: unknown): Statement[] => {
  const statement = (document as { Statement?: Statement | Statement[] } | undefined)?.Statement;
  return statement === undefined ? [] : Array.isArray(statement) ? statement : [statement];
};

export function parseSessionPolicy(policy: unknown): Statement[] {
  return statementsOf(policy);
}

export interface RolePolicies {
  readonly roleArn: string;
  /** Identity statements: inline policies and AWS::IAM::Policy resources attached to the role. */
  readonly identity: readonly Statement[];
  /** Deny statements of bucket policies that name this role (resource-side denies). */
  readonly resourceDenies: readonly Statement[];
  readonly trust: readonly Statement[];
  /** Managed policies attached by ARN: not evaluated, so they are reported. */
  readonly managedPolicyArns: readonly string[];
  /** The role's tags: `aws:PrincipalTag/<key>` of its sessions. */
  readonly tags: Readonly<Record<string, string>>;
}

/** Every statement the synthesized app attaches to one role, with intrinsics resolved. */
export function rolePolicies(assembly: Assembly, roleLogicalId: string): RolePolicies {
  const owner = assembly.stacks.find((s) => s.resources[roleLogicalId]);
  if (!owner) throw new Error(`no role ${roleLogicalId} in the assembly`);
  const role = owner.resources[roleLogicalId];
  const props = (assembly.resolve(owner.stackName, role.Properties) ?? {}) as {
    Policies?: { PolicyDocument: unknown }[];
    AssumeRolePolicyDocument?: unknown;
    ManagedPolicyArns?: string[];
    Tags?: { Key: string; Value: string }[];
  };
  const roleName = roleLogicalId;
  const roleArn = `arn:aws:iam::123456789012:role/${roleName}`;
  const identity: Statement[] = (props.Policies ?? []).flatMap((p) => statementsOf(p.PolicyDocument));
  const resourceDenies: Statement[] = [];
  for (const stack of assembly.stacks) {
    for (const [, r] of Object.entries(stack.resources)) {
      if (r.Type === 'AWS::IAM::Policy') {
        const p = assembly.resolve(stack.stackName, r.Properties) as { Roles?: string[]; PolicyDocument: unknown };
        if ((p.Roles ?? []).includes(roleName)) identity.push(...statementsOf(p.PolicyDocument));
      }
      if (r.Type === 'AWS::S3::BucketPolicy') {
        const p = assembly.resolve(stack.stackName, r.Properties) as { PolicyDocument: unknown };
        for (const s of statementsOf(p.PolicyDocument)) {
          if (s.Effect === 'Deny' && principalMatches(s.Principal, roleArn)) resourceDenies.push(s);
        }
      }
    }
  }
  const tags = Object.fromEntries((props.Tags ?? []).map((t) => [t.Key, String(t.Value)]));
  return { roleArn, identity, resourceDenies, trust: statementsOf(props.AssumeRolePolicyDocument), managedPolicyArns: props.ManagedPolicyArns ?? [], tags };
}

export function principalMatches(principal: unknown, arn: string): boolean {
  if (principal === '*') return true;
  const aws = (principal as { AWS?: string | string[] } | undefined)?.AWS;
  // Trusting an account's root delegates to that account's identity policies: any of its principals.
  const account = /^arn:aws:iam::(\d{12}):/.exec(arn)?.[1];
  return list(aws).some((p) => p === '*' || p === arn || (account !== undefined && p === `arn:aws:iam::${account}:root`));
}

/** Whether a resource policy's `Principal` names this service principal (`cloudwatch.amazonaws.com`) or everyone. */
export function servicePrincipalMatches(principal: unknown, service: string): boolean {
  if (principal === '*') return true;
  const p = principal as { Service?: string | string[]; AWS?: string | string[] } | undefined;
  return list(p?.Service).includes(service) || list(p?.AWS).includes('*');
}

/**
 * A resource policy's verdict for a call by a service principal (an SNS topic policy, a queue
 * policy): only the statements whose `Principal` covers the service take part, then the usual
 * explicit-deny-wins logic. With no Allow for it a resource policy that exists grants nothing
 * (SNS's default policy is replaced by any topic policy).
 */
export function evaluateForService(statements: readonly Statement[], service: string, request: Request): Decision {
  return evaluate(statements.filter((s) => servicePrincipalMatches(s.Principal, service)), request);
}

/** Whether `callerRoleArn` may assume the role whose trust policy is `trust`. */
export function trustAllows(trust: readonly Statement[], callerRoleArn: string, callerTags: Readonly<Record<string, string>> = {}): boolean {
  const context = Object.fromEntries(Object.entries(callerTags).map(([k, v]) => [`aws:PrincipalTag/${k}`, v]));
  const request = { action: 'sts:AssumeRole', resource: '', context };
  const matching = (effect: 'Allow' | 'Deny') =>
    trust.some((s) => s.Effect === effect && principalMatches(s.Principal, callerRoleArn) && matchesAction(s, request.action) && matchesConditions(s, context));
  return !matching('Deny') && matching('Allow');
}

/** The decision for one call by a function's role: its identity policies and resource denies. */
export function decide(policies: RolePolicies, request: Request, session?: readonly Statement[]): Decision {
  const denied = policies.resourceDenies.find((s) => applies(s, request));
  if (denied) return { allowed: false, reason: 'explicit-deny', by: denied };
  return evaluateWithSession(policies.identity, session, request);
}

/** `s3:GetObject` granted but never called, etc.: the least-privilege hint. */
export function unusedGrants(policies: RolePolicies, used: readonly Request[]): string[] {
  const unused: string[] = [];
  for (const s of policies.identity) {
    if (s.Effect !== 'Allow') continue;
    for (const action of list(s.Action)) {
      const exercised = used.some((r) => wildcard(action, r.action, true) && matchesResource(s, r.resource));
      if (!exercised) unused.push(`${action} on ${list(s.Resource).join(', ') || '(any)'}`);
    }
  }
  return [...new Set(unused)];
}
