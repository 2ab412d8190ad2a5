/**
 * The policy engine without the cold tax (issue #37; lib/governance/policy-engine.ts): the schema
 * is used at build time only, and a policy it rejects fails the build; no decision parses it; the
 * base policy set is parsed once per process; a platform administrator's decision that needs no
 * engine agrees with the engine and does not load it.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ALL_OPERATIONS } from '../../lib/contract/operations.js';
import { POLICY_DIR, renderPolicyText } from '../../scripts/policy-text.js';

const calls = vi.hoisted(() => ({ loads: 0, schema: 0, sets: [] as string[], schemaNames: [] as unknown[] }));
vi.mock('@cedar-policy/cedar-wasm/nodejs', async (importOriginal) => {
  const cedar = await importOriginal<typeof import('@cedar-policy/cedar-wasm/nodejs')>();
  calls.loads++;
  return {
    ...cedar,
    preparseSchema: (...args: Parameters<typeof cedar.preparseSchema>) => {
      calls.schema++;
      return cedar.preparseSchema(...args);
    },
    preparsePolicySet: (id: string, policies: Parameters<typeof cedar.preparsePolicySet>[1]) => {
      calls.sets.push(id);
      return cedar.preparsePolicySet(id, policies);
    },
    statefulIsAuthorized: (call: Parameters<typeof cedar.statefulIsAuthorized>[0]) => {
      calls.schemaNames.push(call.preparsedSchemaName);
      return cedar.statefulIsAuthorized(call);
    },
  };
});

const scratch = mkdtempSync(path.join(tmpdir(), 'rask-policies-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the schema at build time', () => {
  const withPolicy = (name: string, text: string) => {
    const dir = mkdtempSync(path.join(scratch, 'p-'));
    cpSync(POLICY_DIR, dir, { recursive: true });
    writeFileSync(path.join(dir, name), text);
    return dir;
  };

  it('renders the committed policies (they validate)', () => {
    expect(() => renderPolicyText()).not.toThrow();
  });

  it('refuses to render a policy the schema rejects, naming it (an attribute the context does not have)', () => {
    const dir = withPolicy('bad.cedar', '@id("reads-nothing")\npermit (principal, action == Rask::Action::"table:read", resource) when { context.unknown_flag };\n');
    expect(() => renderPolicyText(dir)).toThrow(/schema rejects policies: reads-nothing: /);
  });

  it('refuses to render a policy naming an action the schema does not declare', () => {
    const dir = withPolicy('bad.cedar', '@id("no-such-action")\npermit (principal, action == Rask::Action::"table:teleport", resource);\n');
    expect(() => renderPolicyText(dir)).toThrow(/no-such-action/);
  });
});

describe('decisions', async () => {
  const { authorize, decide, decidesWithoutEngine, loadEngine, preparePolicyEngine } = await import('../../lib/governance/policy-engine.js');
  const table = { resource: { type: 'Table', id: 'p/ns/t' }, ancestors: [{ type: 'Namespace', id: 'p/ns' }, { type: 'Project', id: 'p' }, { type: 'Platform', id: 'rask' }] } as const;
  const actions = [...new Set(ALL_OPERATIONS.map((o) => o.action))];

  it("a platform administrator's request without grants or quarantine is decided without loading the engine", async () => {
    for (const action of actions) {
      expect(await authorize({ principal: 'admin', platformAdmin: true, action, target: table, grants: [], quarantined: false })).toEqual({ allowed: true, policies: ['platform-admin'] });
    }
    expect(calls.loads).toBe(0);
  });

  it('that shortcut is what the engine decides, for every action; quarantine and grants go to the engine', async () => {
    const cedar = await loadEngine();
    for (const action of actions) {
      const request = { principal: 'admin', platformAdmin: true, action, target: table, grants: [], quarantined: false } as const;
      expect(decidesWithoutEngine(request), action).toEqual(decide(cedar, request));
      expect(decidesWithoutEngine({ ...request, quarantined: true })).toBeUndefined();
      expect(decidesWithoutEngine({ ...request, platformAdmin: false })).toBeUndefined();
      expect(decidesWithoutEngine({ ...request, grants: [{ grant: { role: 'reader', scope: { kind: 'project' } }, on: { type: 'Project', id: 'p' } }] })).toBeUndefined();
    }
    // Quarantine forbids the catalog actions, the administrator's too.
    expect((await authorize({ principal: 'admin', platformAdmin: true, action: 'table:read', target: table, grants: [], quarantined: true })).allowed).toBe(false);
  });

  it('parse no schema, and the base policy set once per process', async () => {
    await preparePolicyEngine();
    await preparePolicyEngine();
    const before = calls.sets.length;
    for (let i = 0; i < 20; i++) {
      await authorize({ principal: `p${i}`, platformAdmin: false, action: 'key:manage', target: { resource: { type: 'Principal', id: `p${i}` }, ancestors: [{ type: 'Platform', id: 'rask' }] }, grants: [], quarantined: false });
    }
    expect(calls.sets.length).toBe(before);
    expect(calls.sets.filter((id) => id === 'base')).toEqual(['base']);
    expect(calls.schema).toBe(0);
    expect(calls.schemaNames.every((n) => n === undefined)).toBe(true);
  });

  it('grants still decide through their links (a reader may read, not write)', async () => {
    const grants = [{ grant: { role: 'reader' as const, scope: { kind: 'project' as const } }, on: { type: 'Project' as const, id: 'p' } }];
    expect((await authorize({ principal: 'bob', platformAdmin: false, action: 'table:read', target: table, grants, quarantined: false })).allowed).toBe(true);
    expect((await authorize({ principal: 'bob', platformAdmin: false, action: 'table:write', target: table, grants, quarantined: false })).allowed).toBe(false);
  });
});
