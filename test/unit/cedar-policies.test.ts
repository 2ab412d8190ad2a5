import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadEngine, policyParts } from '../../lib/governance/policy-engine.js';
import { CEDAR_SCHEMA } from '../../lib/governance/policy-text.js';
import { ALL_OPERATIONS } from '../../lib/contract/operations.js';
import { renderPolicyText } from '../../scripts/policy-text.js';

describe('Cedar policies (policies/*.cedar)', () => {
  it('are what lib/governance/policy-text.ts carries (run npx tsx scripts/policy-text.ts)', () => {
    expect(readFileSync(new URL('../../lib/governance/policy-text.ts', import.meta.url), 'utf8')).toBe(renderPolicyText());
  });

  it('validate strictly against the schema', async () => {
    const cedar = await loadEngine();
    const { staticPolicies, templates } = policyParts();
    const answer = cedar.validate({ schema: CEDAR_SCHEMA, policies: { staticPolicies, templates } });
    expect(answer.type).toBe('success');
    if (answer.type === 'success') expect(answer.validationErrors).toEqual([]);
    expect(Object.keys(templates).sort()).toEqual(['admin', 'reader', 'writer']);
  });

  it('declare every action of the operation table', () => {
    const declared = new Set([...CEDAR_SCHEMA.matchAll(/action "([a-z]+:[a-z]+)"/g)].map((m) => m[1]));
    const used = new Set(ALL_OPERATIONS.map((o) => o.action));
    expect([...used].filter((a) => !declared.has(a))).toEqual([]);
  });
});
