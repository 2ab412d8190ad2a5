/**
 * What maintenance decides about a table from the registry and the table's own folder alone,
 * without opening the dataset: why it must be left alone now (`skipReason`), and for the sweep,
 * its effective policy or a policy reason to skip (`precheck`). The scheduled sweep and index
 * build Lambdas run only these checks before queuing a job per table (./fan-out-passes.ts), so
 * this module must not reach lib/data (LanceDB): test/infra/bundle.test.ts holds them to it.
 */
import { hasData } from '../catalog/protocols/lookup.js';
import { encodeSegment, keys } from '../registry/keys.js';
import type { LocationClaimRecord } from '../registry/records.js';
import type { MaintenancePolicy, PolicySource } from './policy.js';
import type { TableUnit } from './walker.js';

export type SkipReason = 'moving' | 'purging' | 'declared-only' | 'policy-disables-every-step' | 'interval';

export interface StepReport {
  readonly status: 'done' | 'skipped' | 'nothing-to-do' | 'would-run' | 'ran-with-compaction';
  readonly reason?: string;
  readonly [field: string]: unknown;
}

export type SweepItem = {
  readonly project: string;
  readonly table: readonly string[];
  readonly skipped?: SkipReason;
  readonly reason?: string;
  readonly policy_source?: PolicySource;
  readonly overrides?: Readonly<Record<string, number>>;
  readonly rows_before?: number;
  readonly rows_after?: number;
  readonly fragments_before?: number;
  readonly fragments_after?: number;
  readonly versions_removed?: number;
  readonly bytes_removed?: number;
  /** The table's latest version before and after the sweep: the versions it committed lie between (docs/events.md, "Commits straight to storage"). */
  readonly version_before?: number;
  readonly version_after?: number;
  readonly steps?: { readonly compact: StepReport; readonly optimize_indices: StepReport; readonly cleanup: StepReport };
};

/** When the sweep last changed a table (keyed by uid, like policies: it dies with the table). */
export interface LastSweepRecord {
  readonly kind: 'last-sweep';
  readonly uid: string;
  readonly at: string;
}

export const lastSweepKey = (unit: TableUnit) => `p/${encodeSegment(unit.project)}/maint/last-sweep/${encodeSegment(unit.record.uid)}`;

/** Why a table must not be touched by maintenance now, or undefined. Shared with the index builder. */
export async function skipReason(unit: TableUnit): Promise<{ skipped: SkipReason; reason: string } | undefined> {
  const state = unit.record.state ?? 'active';
  if (state !== 'active') return { skipped: 'moving', reason: `the table is mid-rename (state ${state}); the next sweep will see it settled` };
  const claim = await unit.services.registry.read<LocationClaimRecord>(keys.locationClaim(unit.project, unit.record.warehouse, unit.record.path));
  if (claim?.value.state === 'purging') return { skipped: 'purging', reason: 'the table is being purged (its location claim is purging)' };
  if (!(await hasData(unit.store, unit.record.path))) {
    return { skipped: 'declared-only', reason: 'the table is declared but has no committed version yet' };
  }
  return undefined;
}

export type Meta = Pick<SweepItem, 'project' | 'table' | 'policy_source' | 'overrides'>;

/**
 * What the sweep can decide from the registry alone (no dataset opened): a reason to leave the
 * table alone, or its policy. The scheduled pass queues a job only for tables that pass it.
 */
export async function precheck(unit: TableUnit, now: () => Date): Promise<{ skip: SweepItem } | { meta: Meta; policy: MaintenancePolicy }> {
  const base = { project: unit.project, table: unit.id };
  const skip = await skipReason(unit);
  if (skip) return { skip: { ...base, ...skip } };
  const effective = await unit.policy();
  const { policy } = effective;
  const meta = { ...base, policy_source: effective.source, ...(effective.overrides ? { overrides: effective.overrides } : {}) };
  if (!policy.compact_enabled && !policy.optimize_indices_enabled && !policy.cleanup_enabled) {
    return { skip: { ...meta, skipped: 'policy-disables-every-step', reason: 'the effective policy disables compaction, index optimization and cleanup' } };
  }
  // `interval_minutes`: the shortest time between two sweeps that changed this table. Only
  // material sweeps are recorded, so an idle table costs one GET here and writes nothing.
  if (policy.interval_minutes > 0) {
    const last = await unit.services.registry.read<LastSweepRecord>(lastSweepKey(unit));
    const due = last ? Date.parse(last.value.at) + policy.interval_minutes * 60_000 : 0;
    if (due > now().getTime()) {
      return { skip: { ...meta, skipped: 'interval', reason: `swept at ${last!.value.at}; the policy's interval is ${policy.interval_minutes} minutes` } };
    }
  }
  return { meta, policy };
}

