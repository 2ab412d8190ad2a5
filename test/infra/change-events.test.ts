import { beforeAll, describe, expect, it } from 'vitest';
import { flat, logicalId, resourcesOfType, synthRask } from './helpers.js';

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

  // The change relay publishes (docs/events.md, "The relay"); the meta, data and jobs functions
  // keep their grant for now but no longer publish (their events go to the change log).
  it('lets the change relay and the meta, data and jobs functions (and only those) put events on the bus, named in their environment', () => {
    const bus = Object.keys(resourcesOfType(template(), 'AWS::Events::EventBus'))[0];
    const functions = resourcesOfType(template(), 'AWS::Lambda::Function');
    const publishers = Object.entries(functions)
      .filter(([, f]) => (f.Properties!.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.RASK_EVENT_BUS_NAME)
      .map(([id]) => id)
      .sort();
    expect(publishers).toEqual(['ChangeRelayFunction', 'FunctionsData', 'FunctionsJobs', 'FunctionsMeta'].map((p) => logicalId(template(), 'AWS::Lambda::Function', p)).sort());
    const putters = Object.values(resourcesOfType(template(), 'AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties!.PolicyDocument).includes('"events:PutEvents"'),
    );
    for (const p of putters) {
      const statements = (p.Properties!.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement.filter((s) => s.Action === 'events:PutEvents');
      expect(statements).toEqual([expect.objectContaining({ Resource: { 'Fn::GetAtt': [bus, 'Arn'] } })]);
    }
    expect(putters).toHaveLength(4);
    expect(Object.keys(template().toJSON().Outputs)).toContain('EventBusName');
  });
});
