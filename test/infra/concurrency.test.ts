/**
 * Concurrency caps (issue 28): the jobs function and each maintenance pass reserve a bounded
 * number of concurrent executions, so a backlog of index builds cannot take the account's
 * concurrency from the API; the API functions reserve nothing (they take what the account has).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MAINTENANCE_PASSES } from '../../infra/constructs/maintenance.js';
import { DEFAULT_CONFIG } from '../../infra/config.js';
import { resourcesOfType, synthRask } from './helpers.js';

const reservations = (built: ReturnType<typeof synthRask>) =>
  Object.fromEntries(
    Object.entries(resourcesOfType(built.template, 'AWS::Lambda::Function'))
      .filter(([, f]) => f.Properties!.Runtime?.startsWith('nodejs'))
      .map(([id, f]) => [id, f.Properties!.ReservedConcurrentExecutions as number | undefined]),
  );

const pick = (all: Record<string, number | undefined>, prefix: string) => Object.entries(all).filter(([id]) => id.startsWith(prefix));

describe('reserved concurrency', () => {
  let defaults: ReturnType<typeof synthRask>;
  beforeAll(() => {
    defaults = synthRask({ alarmEmail: 'oncall@example.com' });
  });

  it('caps the jobs function and every maintenance pass by default, and leaves the API functions unreserved', () => {
    const all = reservations(defaults);
    expect(DEFAULT_CONFIG.jobsReservedConcurrency).toBe(5);
    expect(DEFAULT_CONFIG.maintenanceReservedConcurrency).toBe(2);
    expect(pick(all, 'FunctionsJobs')).toEqual([[expect.any(String), 5]]);
    const passes = pick(all, 'Maintenance');
    expect(passes).toHaveLength(MAINTENANCE_PASSES.length);
    for (const [id, n] of passes) expect(n, id).toBe(2);
    for (const prefix of ['FunctionsMeta', 'FunctionsData', 'Auth']) {
      const found = pick(all, prefix);
      expect(found.length, prefix).toBeGreaterThan(0);
      for (const [id, n] of found) expect(n, id).toBeUndefined();
    }
  });

  it('takes the caps from settings, and reserves nothing with "none"', () => {
    const all = reservations(synthRask({ alarmEmail: 'oncall@example.com', jobsReservedConcurrency: 12, maintenanceReservedConcurrency: 'none' }));
    expect(pick(all, 'FunctionsJobs').map(([, n]) => n)).toEqual([12]);
    for (const [id, n] of pick(all, 'Maintenance')) expect(n, id).toBeUndefined();
  });
});

describe('the per-IP rate rule (WAF)', () => {
  it('by default the stack creates a web ACL with one rate-based rule per client IP, answering 429 / code 21, on the stage', () => {
    const built = synthRask({ alarmEmail: 'oncall@example.com' });
    const acls = Object.entries(resourcesOfType(built.template, 'AWS::WAFv2::WebACL'));
    expect(acls).toHaveLength(1);
    const [aclId, acl] = acls[0];
    expect(acl.Properties!.Scope).toBe('REGIONAL');
    expect(acl.Properties!.DefaultAction).toEqual({ Allow: {} });
    const [rule] = acl.Properties!.Rules;
    expect(rule.Statement.RateBasedStatement).toEqual({ Limit: DEFAULT_CONFIG.wafRateLimit, AggregateKeyType: 'IP', EvaluationWindowSec: 300 });
    expect(rule.Action.Block.CustomResponse).toMatchObject({ ResponseCode: 429, CustomResponseBodyKey: 'throttled' });
    expect(JSON.parse(acl.Properties!.CustomResponseBodies.throttled.Content)).toMatchObject({ code: 21 });
    const [association] = Object.values(resourcesOfType(built.template, 'AWS::WAFv2::WebACLAssociation'));
    expect(association.Properties!.WebACLArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
  });

  it('takes the limit from settings, is switched off by "off", and gives way to an existing web ACL', () => {
    const rated = synthRask({ alarmEmail: 'oncall@example.com', wafRateLimit: 500 });
    const [acl] = Object.values(resourcesOfType(rated.template, 'AWS::WAFv2::WebACL'));
    expect(acl.Properties!.Rules[0].Statement.RateBasedStatement.Limit).toBe(500);
    const off = synthRask({ alarmEmail: 'oncall@example.com', wafRateLimit: 'off' });
    expect(Object.keys(resourcesOfType(off.template, 'AWS::WAFv2::WebACL'))).toEqual([]);
    expect(Object.keys(resourcesOfType(off.template, 'AWS::WAFv2::WebACLAssociation'))).toEqual([]);
    const existing = synthRask({ alarmEmail: 'oncall@example.com', webAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/rask/abc' });
    expect(Object.keys(resourcesOfType(existing.template, 'AWS::WAFv2::WebACL'))).toEqual([]);
    expect(Object.values(resourcesOfType(existing.template, 'AWS::WAFv2::WebACLAssociation'))[0].Properties!.WebACLArn).toMatch(/webacl\/rask\/abc$/);
  });
});
