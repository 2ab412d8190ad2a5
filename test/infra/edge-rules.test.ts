/**
 * Refused at the edge (issue 28; infra/constructs/edge-rules.ts): the stack's web ACL answers an
 * oversized body with 413 / code 13 and a request without credentials with 401 / code 16 before
 * API Gateway, so neither costs an authorizer or Lambda invocation. The rules are read from the
 * synthesized template and run through a small evaluator of the WAF statements they use (a
 * missing header matches no size or regex statement, as AWS documents), so what is tested is the
 * template, not the construct's intent.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { EDGE_BODY_LIMIT_BYTES, integerAbove } from '../../infra/constructs/edge-rules.js';
import { resourcesOfType, synthRask } from './helpers.js';

type Statement = Record<string, any>;
type Request = Record<string, string>;

/** The WAF statements the edge rules use, evaluated on a request's headers (lower-case names). */
function matches(statement: Statement, headers: Request): boolean {
  if (statement.AndStatement) return statement.AndStatement.Statements.every((s: Statement) => matches(s, headers));
  if (statement.OrStatement) return statement.OrStatement.Statements.some((s: Statement) => matches(s, headers));
  if (statement.NotStatement) return !matches(statement.NotStatement.Statement, headers);
  const field = (statement.SizeConstraintStatement ?? statement.RegexMatchStatement)?.FieldToMatch?.SingleHeader?.Name;
  if (!field) throw new Error(`statement not modelled: ${JSON.stringify(statement)}`);
  const value = headers[field.toLowerCase()];
  if (value === undefined) return false;
  if (statement.SizeConstraintStatement) {
    const { ComparisonOperator: op, Size: size } = statement.SizeConstraintStatement;
    if (op !== 'GT') throw new Error(`operator not modelled: ${op}`);
    return Buffer.byteLength(value) > size;
  }
  return new RegExp(statement.RegexMatchStatement.RegexString).test(value);
}

describe('integerAbove', () => {
  it('matches exactly the decimal integers above the limit', () => {
    for (const limit of [0, 8, 9, 10, 99, 199, 4_399_999, EDGE_BODY_LIMIT_BYTES, 123_456_789]) {
      const re = new RegExp(integerAbove(limit));
      fc.assert(
        fc.property(fc.oneof(fc.nat({ max: 10 * limit + 20 }), fc.integer({ min: Math.max(0, limit - 20), max: limit + 20 })), fc.nat({ max: 2 }), (n, zeros) => {
          expect(re.test('0'.repeat(zeros) + String(n)), `${limit} vs ${n}`).toBe(n > limit);
        }),
      );
      for (const junk of ['', '-1', '1e9', ' 99999999', '99999999 ', 'abc', '4400001x']) expect(re.test(junk), junk).toBe(false);
    }
  });
});

describe('the web ACL refuses at the edge', () => {
  let acl: Record<string, any>;
  beforeAll(() => {
    const built = synthRask({ alarmEmail: 'oncall@example.com' });
    [acl] = Object.values(resourcesOfType(built.template, 'AWS::WAFv2::WebACL')).map((r) => r.Properties!);
  });

  /** The first rule that matches, as WAF evaluates them (by priority); undefined: allowed through. */
  const verdict = (headers: Request) => {
    const rules = [...acl.Rules].sort((a, b) => a.Priority - b.Priority).filter((r) => !r.Statement.RateBasedStatement);
    const rule = rules.find((r) => matches(r.Statement, headers));
    if (!rule) return undefined;
    const response = rule.Action.Block.CustomResponse;
    return { rule: rule.Name, status: response.ResponseCode, body: JSON.parse(acl.CustomResponseBodies[response.CustomResponseBodyKey].Content) };
  };

  it('keeps the per-IP rate rule first and gives every rule its own priority', () => {
    expect(acl.Rules[0].Name).toBe('per-ip-rate');
    expect(acl.Rules.map((r: { Name: string }) => r.Name)).toEqual(['per-ip-rate', 'body-too-large', 'no-credentials']);
    expect(new Set(acl.Rules.map((r: { Priority: number }) => r.Priority)).size).toBe(3);
  });

  it('a request with neither x-api-key nor Authorization is 401 / code 16; either one passes', () => {
    expect(verdict({ 'content-length': '2' })).toMatchObject({ rule: 'no-credentials', status: 401, body: { code: 16, error: expect.stringMatching(/x-api-key/) } });
    expect(verdict({ 'x-api-key': '' })).toMatchObject({ rule: 'no-credentials', status: 401 });
    expect(verdict({ 'x-api-key': 'rask_k_s' })).toBeUndefined();
    expect(verdict({ authorization: 'Bearer x' })).toBeUndefined();
  });

  it(`a content-length over ${EDGE_BODY_LIMIT_BYTES} is 413 / code 13 naming the limit; at the limit it passes`, () => {
    const key = { 'x-api-key': 'rask_k_s' };
    expect(verdict({ ...key, 'content-length': String(EDGE_BODY_LIMIT_BYTES + 1) })).toMatchObject({
      rule: 'body-too-large',
      status: 413,
      body: { code: 13, error: expect.stringContaining(`${EDGE_BODY_LIMIT_BYTES} bytes`) },
    });
    expect(verdict({ ...key, 'content-length': '9000000' })).toMatchObject({ status: 413 });
    expect(verdict({ ...key, 'content-length': String(EDGE_BODY_LIMIT_BYTES) })).toBeUndefined();
    // Also before the credential check: an oversized anonymous upload is told its size is the problem.
    expect(verdict({ 'content-length': '9000000' })).toMatchObject({ status: 413 });
  });

  it('the limit leaves the body, base64-encoded with room for the event, inside Lambda 6 MB', () => {
    expect(Math.ceil(EDGE_BODY_LIMIT_BYTES / 3) * 4 + 64 * 1024).toBeLessThan(6 * 1024 * 1024);
  });
});
