import { describe, expect, it } from 'vitest';
import {
  BUILTIN_POLICY,
  parsePolicyFields,
  pickWinner,
  withOverrides,
  type PolicyChain,
  type PolicyRecord,
} from '../../lib/maintenance/policy.js';
import type { WarehouseRecord } from '../../lib/registry/records.js';

const rec = (older_than_days: number, level: PolicyRecord['level']): PolicyRecord => ({
  kind: 'maintenance-policy',
  level,
  project: 'p',
  policy: { older_than_days },
  updatedAt: `2026-01-0${older_than_days % 9 + 1}T00:00:00.000Z`,
});

const warehouse = (policy?: Record<string, unknown>): WarehouseRecord => ({
  kind: 'warehouse',
  project: 'p',
  name: 'w',
  storage: { kind: 'file', path: '/x' },
  managedVersioning: true,
  trashGraceDays: 0,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...(policy ? { maintenancePolicy: policy } : {}),
});

/** Table a.b.t: namespaces a (outer) and a.b (nearest). */
const chain = (wh?: WarehouseRecord): PolicyChain => ({
  project: 'p',
  table: { id: ['a', 'b', 't'], uid: 'T' },
  namespaces: [
    { id: ['a', 'b'], uid: 'NB' },
    { id: ['a'], uid: 'NA' },
  ],
  ...(wh ? { warehouse: wh } : {}),
});

describe('policy resolution: winner takes all, and the source names the winner', () => {
  // Every combination of present records (table, a.b, a, project, warehouse default): the
  // nearest present one wins, supplies older_than_days, and is the one named as the source.
  const levels = ['table', 'nsB', 'nsA', 'project', 'warehouse'] as const;
  const rows: { present: (typeof levels)[number][]; winner: string; days: number }[] = [];
  for (let mask = 0; mask < 32; mask++) {
    const present = levels.filter((_, i) => mask & (1 << i));
    const first = present[0];
    const days = { table: 1, nsB: 2, nsA: 3, project: 4, warehouse: 5 };
    rows.push({ present, winner: first ?? 'builtin', days: first ? days[first] : BUILTIN_POLICY.older_than_days });
  }

  it.each(rows)('records $present → $winner wins', ({ present, winner, days }) => {
    const has = (l: string) => present.includes(l as never);
    const effective = pickWinner(chain(has('warehouse') ? warehouse({ older_than_days: 5 }) : warehouse()), {
      ...(has('table') ? { table: rec(1, 'table') } : {}),
      namespaces: [has('nsB') ? rec(2, 'namespace') : undefined, has('nsA') ? rec(3, 'namespace') : undefined],
      ...(has('project') ? { project: rec(4, 'project') } : {}),
    });
    expect(effective.policy.older_than_days).toBe(days);
    const expectedSource = {
      table: { level: 'table', id: ['a', 'b', 't'], key: 'p/p/maint/policy/table/T' },
      nsB: { level: 'namespace', id: ['a', 'b'], key: 'p/p/maint/policy/ns/NB' },
      nsA: { level: 'namespace', id: ['a'], key: 'p/p/maint/policy/ns/NA' },
      project: { level: 'project', name: 'p', key: 'p/p/maint/policy/project' },
      warehouse: { level: 'warehouse', name: 'w' },
      builtin: { level: 'builtin' },
    }[winner]!;
    expect(effective.source).toMatchObject(expectedSource);
  });

  it('the winner supplies every field: what it leaves out comes from the built-in defaults, not the records it shadows', () => {
    const table: PolicyRecord = { ...rec(1, 'table'), policy: { compact_enabled: false } };
    const project: PolicyRecord = { ...rec(4, 'project'), policy: { older_than_days: 30, cleanup_enabled: false } };
    const effective = pickWinner(chain(), { table, namespaces: [undefined, undefined], project });
    expect(effective.policy).toEqual({ ...BUILTIN_POLICY, compact_enabled: false });
    expect(effective.source.level).toBe('table');
  });

  it('one-run overrides shadow the effective policy and keep its source', () => {
    const effective = pickWinner(chain(), { namespaces: [rec(2, 'namespace'), undefined] });
    const run = withOverrides(effective, { olderThanDays: 0, retainVersions: 3 });
    expect(run.policy).toMatchObject({ older_than_days: 0, retain_versions: 3 });
    expect(run.source).toEqual(effective.source);
    expect(run.overrides).toEqual({ older_than_days: 0, retain_versions: 3 });
    expect(() => withOverrides(effective, { retainVersions: 0 })).toThrow(/retain_versions/);
  });
});

describe('policy fields', () => {
  it('accepts every documented field', () => {
    const fields = parsePolicyFields({
      older_than_days: 0,
      retain_versions: 2,
      compact_enabled: false,
      optimize_indices_enabled: true,
      cleanup_enabled: true,
      target_rows_per_fragment: 1000,
      interval_minutes: 60,
      fold_threshold: 0.2,
      indices: [{ name: 'id_idx', column: 'id', type: 'btree', min_rows: 10 }],
    });
    expect(fields.indices).toEqual([{ name: 'id_idx', column: 'id', type: 'BTREE', min_rows: 10 }]);
  });

  it.each([
    [{ older_than_days: -1 }, /older_than_days/],
    [{ older_than_days: 1.5 }, /older_than_days/],
    [{ retain_versions: 0 }, /retain_versions/],
    [{ compact_enabled: 'yes' }, /compact_enabled/],
    [{ fold_threshold: 2 }, /fold_threshold/],
    [{ retention: 3 }, /unknown field "retention"/],
    [{ indices: {} }, /indices/],
    [{ indices: [{ name: 'i', column: 'c', type: 'HASH' }] }, /type must be one of/],
    [{ indices: [{ name: 'i', column: 'c', type: 'BTREE' }, { name: 'i', column: 'd', type: 'BTREE' }] }, /twice/],
    [[], /must be an object/],
  ])('refuses %j', (body, message) => {
    expect(() => parsePolicyFields(body)).toThrow(message);
  });
});
