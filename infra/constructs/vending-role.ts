import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { acknowledgeWildcardResource } from '../nag.js';
import type { StorageRefs } from '../state-stack.js';
import { prefixStatements } from './permissions.js';

export interface VendingRoleProps {
  /** The only roles that may assume it: named one by one in its trust policy (docs/deploy.md, "Credential vending"). */
  readonly trusted: readonly iam.IRole[];
  readonly storage: StorageRefs;
  readonly description: string;
}

/**
 * A role vended credentials are derived from. Its policy is the ceiling of any vended session
 * (the session policy narrows it to one table's prefix), so it names only the warehouse prefix:
 * the registry can never be vended. Its trust names exact roles, never the account with a
 * condition: whoever may tag or create a role must not thereby gain warehouse access.
 */
export class VendingRole extends Construct {
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: VendingRoleProps) {
    super(scope, id);
    const [first, ...rest] = props.trusted;
    if (!first) throw new Error('a vending role needs at least one trusted role');
    const { storage } = props;
    const { statements, objectsArn } = prefixStatements({ bucket: storage.warehouseBucket, prefix: storage.warehousePrefix, access: 'warehouse' });
    // 'Default': the role keeps the logical id it had before this construct wrapped it (no
    // replacement on deploy). The policy is inline: a separate AWS::IAM::Policy per role would
    // cost per-operation mode's nested stack 45 more of its 500 resources.
    this.role = new iam.Role(this, 'Default', {
      assumedBy: rest.length ? new iam.CompositePrincipal(first, ...rest) : first,
      description: props.description,
      // Sessions assumed from a Lambda role are role chaining, which AWS caps at one hour anyway.
      maxSessionDuration: Duration.hours(1),
      inlinePolicies: { Vending: new iam.PolicyDocument({ statements: [...statements, storage.registryDenial()] }) },
    });
    for (const role of props.trusted) this.role.grantAssumeRole(role);
    acknowledgeWildcardResource(
      this.role,
      objectsArn,
      `The vending role's ceiling is the warehouse prefix "${storage.warehousePrefix}"; each vended session is narrowed to one table's prefix by its session policy.`,
    );
  }
}
