import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { synthRask } from './helpers.js';

/**
 * cdk-nag AwsSolutions on the default configuration: no finding is left unacknowledged, every
 * acknowledgement has a reason and is actually needed (a stale one would hide a future finding
 * of the same id).
 */

let built: ReturnType<typeof synthRask>;
beforeAll(() => {
  built = synthRask();
});

const describeViolations = (violations: { ruleName: string; violatingResources: { constructPath?: string }[] }[]) =>
  violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);

/** Every acknowledgement recorded in the construct tree: rule id -> reasons. */
function acknowledgements(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const c of built.app.node.findAll()) {
    for (const entry of c.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        const rule = id.replace(/^annotation::/i, '');
        found.set(rule, [...(found.get(rule) ?? []), reason]);
      }
    }
  }
  return found;
}

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged error or warning', () => {
    const report = new AwsSolutionsChecks().validateScope(built.app);
    expect(describeViolations(report.violations)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('has a reason for every acknowledgement', () => {
    const acks = acknowledgements();
    expect(acks.size).toBeGreaterThan(0);
    for (const [rule, reasons] of acks) {
      for (const reason of reasons) expect(reason.length, rule).toBeGreaterThan(40);
    }
  });

  it('acknowledges only findings that exist', () => {
    // The same checks with acknowledgements ignored: the raw findings.
    const raw = new AwsSolutionsChecks();
    (raw as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
    const findings = new Set(raw.validateScope(built.app).violations.map((v) => v.ruleName));
    const stale = [...acknowledgements().keys()].filter((rule) => !findings.has(rule));
    expect(stale).toEqual([]);
  });

  it('acknowledges wildcards one resource at a time, never a whole rule', () => {
    for (const rule of acknowledgements().keys()) {
      if (rule.startsWith('AwsSolutions-IAM5') || rule.startsWith('AwsSolutions-IAM4')) expect(rule).toMatch(/\[(Resource|Policy|Action)::.+\]$/);
    }
  });
});
