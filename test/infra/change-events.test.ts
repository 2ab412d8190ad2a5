import { beforeAll, describe, expect, it } from 'vitest';
import { evaluate, type Statement } from '../deploy/iam.js';
import { asArray, flat, identityStatements, logicalId, resourcesOfType, synthRask } from './helpers.js';

/** The change-event bus of docs/events.md, its example subscription, and who may publish. */
describe('change events in the stack', () => {
  let built: ReturnType<typeof synthRask>;
  beforeAll(() => {
    built = synthRask();
  });
  const template = () => built.template;

  it('creates a bus with an archive and an example rule to a log group the bus may write', () => {
    const buses = Object.keys(resourcesOfType(template(), 'AWS::Events::EventBus'));
    expect(buses).toHaveLength(1);
    const bus = buses[0];
    template().hasResourceProperties('AWS::Events::Archive', { SourceArn: { 'Fn::GetAtt': [bus, 'Arn'] }, EventPattern: { source: [{ prefix: 'rask://' }] } });
    const rules = Object.values(resourcesOfType(template(), 'AWS::Events::Rule')).filter((r) => JSON.stringify(r.Properties!.EventBusName) === JSON.stringify({ Ref: bus }));
    expect(rules).toHaveLength(1);
    expect(rules[0].Properties!.EventPattern).toEqual({ source: [{ prefix: 'rask://' }] });
    const logGroup = logicalId(template(), 'AWS::Logs::LogGroup', 'ChangeEventsLog');
    // The group's own ARN: the `Arn` attribute ends in `:*` (its streams), which EventBridge
    // accepts as a target and then delivers nothing to.
    const targets = rules[0].Properties!.Targets as { Arn: unknown }[];
    expect(targets).toHaveLength(1);
    expect(flat(targets[0]!.Arn)).toBe(`arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:<${logGroup}>`);
    const [policy] = Object.values(resourcesOfType(template(), 'AWS::Logs::ResourcePolicy'));
    const document = JSON.parse(JSON.stringify(policy.Properties!.PolicyDocument));
    expect(JSON.stringify(document)).toContain('events.amazonaws.com');
    expect(JSON.stringify(document)).toContain('logs:PutLogEvents');
  });

  // Only the change relay publishes (docs/events.md, "The relay"): the meta, data and jobs
  // functions append to the change log and never call PutEvents, so their roles may not either.
  it('lets the change relay (and only it) put events on the bus, named in its environment', () => {
    const bus = Object.keys(resourcesOfType(template(), 'AWS::Events::EventBus'))[0];
    const busArn = flat({ 'Fn::GetAtt': [bus, 'Arn'] });
    const functions = resourcesOfType(template(), 'AWS::Lambda::Function');
    const publishers = Object.entries(functions)
      .filter(([, f]) => (f.Properties!.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.RASK_EVENT_BUS_NAME)
      .map(([id]) => id);
    expect(publishers).toEqual([logicalId(template(), 'AWS::Lambda::Function', 'ChangeRelayFunction')]);
    // Read with the IAM evaluator of the deploy suite, role by role.
    const canPut = (fnId: string) => {
      const role = (functions[fnId].Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const statements = identityStatements(template())
        .filter((s) => s.roles.includes(role))
        .map(({ statement }) => ({ ...statement, Resource: asArray(statement.Resource).map(flat) }) as Statement);
      return evaluate(statements, { action: 'events:PutEvents', resource: busArn, context: {} }).allowed;
    };
    expect(canPut(logicalId(template(), 'AWS::Lambda::Function', 'ChangeRelayFunction'))).toBe(true);
    for (const name of ['FunctionsMeta', 'FunctionsData', 'FunctionsJobs']) expect(canPut(logicalId(template(), 'AWS::Lambda::Function', name)), name).toBe(false);
    const putters = Object.values(resourcesOfType(template(), 'AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties!.PolicyDocument).includes('"events:PutEvents"'),
    );
    expect(putters).toHaveLength(1);
    expect(Object.keys(template().toJSON().Outputs)).toContain('EventBusName');
  });
});
