/**
 * Maintenance policies with provenance (docs/rules.md rule 12, issue #9 item 1).
 *
 * A policy may be set on a project, a namespace or a table. It is a registry record of its own,
 * never table schema metadata, so setting one never creates a table version and cannot be
 * changed through the properties door. Resolution is winner-takes-all: the table's own record
 * shadows the nearest namespace's, which shadows the project's, which shadows the warehouse's
 * default, which shadows the built-in defaults. The winner supplies every field (fields it does
 * not set come from the built-in defaults, never from a record it shadows), and every answer
 * that shows an effective policy names the record that won.
 *
 * Namespace and table records are keyed by the object's `uid`, not its name: a rename keeps the
 * policy (the uid travels with the table), and a re-created name is a new object with a new uid,
 * so it never inherits a dropped object's policy (the stale record is inert garbage that
 * reconcile can report).
 */
import { InvalidInputError, NamespaceNotFoundError } from '../errors.js';
import { encodeSegment } from '../registry/keys.js';
import type { NamespaceRecord, TableRecord, WarehouseRecord } from '../registry/records.js';
import type { Registry } from '../registry/registry.js';

export type IndexType = 'BTREE' | 'BITMAP' | 'LABEL_LIST' | 'FTS' | 'IVF_PQ' | 'IVF_FLAT' | 'IVF_HNSW_SQ' | 'IVF_HNSW_PQ';
export const INDEX_TYPES: readonly IndexType[] = ['BTREE', 'BITMAP', 'LABEL_LIST', 'FTS', 'IVF_PQ', 'IVF_FLAT', 'IVF_HNSW_SQ', 'IVF_HNSW_PQ'];

/** An index the policy wants every table it governs to have. */
export interface DesiredIndex {
  readonly name: string;
  readonly column: string;
  readonly type: IndexType;
  /** Passed to the index config (e.g. num_partitions); validated by the builder's engine call. */
  readonly params?: Readonly<Record<string, unknown>>;
  /** Build only once the table has at least this many rows (an index on 10 rows is noise). */
  readonly min_rows?: number;
}

/** Every field of a policy; the wire and record shape (snake_case, like the spec). */
export interface MaintenancePolicy {
  /** Cleanup reclaims versions older than this many days (0 = every untagged old version now). */
  readonly older_than_days: number;
  /** Cleanup always keeps at least this many newest versions. */
  readonly retain_versions: number;
  readonly compact_enabled: boolean;
  readonly optimize_indices_enabled: boolean;
  readonly cleanup_enabled: boolean;
  /**
   * Desired rows per fragment. The pinned Node SDK (LanceDB 0.31) compacts with Lance's own
   * default and has no knob for it, so this is reported, not applied (docs/maintenance.md).
   */
  readonly target_rows_per_fragment: number;
  /** Shortest time between two sweeps of one table, in minutes (0 = every scheduled pass). */
  readonly interval_minutes: number;
  /** Fold unindexed rows into an index once they are this share of its rows (0–1). */
  readonly fold_threshold: number;
  readonly indices: readonly DesiredIndex[];
}

/** What a record may set; absent fields come from the built-in defaults. */
export type PolicyFields = Partial<MaintenancePolicy>;

export const BUILTIN_POLICY: MaintenancePolicy = {
  older_than_days: 7,
  retain_versions: 1,
  compact_enabled: true,
  optimize_indices_enabled: true,
  cleanup_enabled: true,
  target_rows_per_fragment: 1024 * 1024,
  interval_minutes: 0,
  fold_threshold: 0.1,
  indices: [],
};

export type PolicyLevel = 'table' | 'namespace' | 'project' | 'warehouse' | 'builtin';

/** Which record won: shown beside every effective policy. */
export interface PolicySource {
  readonly level: PolicyLevel;
  /** The namespace or table id (table, namespace), project or warehouse name. */
  readonly id?: readonly string[];
  readonly name?: string;
  /** The registry key of the winning record (absent for built-in defaults). */
  readonly key?: string;
  readonly updated_at?: string;
}

export interface EffectivePolicy {
  readonly policy: MaintenancePolicy;
  readonly source: PolicySource;
}

export interface PolicyRecord {
  readonly kind: 'maintenance-policy';
  readonly level: 'table' | 'namespace' | 'project';
  readonly project: string;
  /** The object's id when it was set (informational: the key holds the uid). */
  readonly id?: readonly string[];
  readonly uid?: string;
  readonly policy: PolicyFields;
  readonly updatedAt: string;
}

// ---- keys ----

/** Policy records live beside, never inside, the tree the listing doors read. */
export const policyKeys = {
  project: (project: string) => `p/${encodeSegment(project)}/maint/policy/project`,
  namespace: (project: string, uid: string) => `p/${encodeSegment(project)}/maint/policy/ns/${encodeSegment(uid)}`,
  table: (project: string, uid: string) => `p/${encodeSegment(project)}/maint/policy/table/${encodeSegment(uid)}`,
};

// ---- validation ----

const FIELDS: Record<keyof MaintenancePolicy, (v: unknown, f: string) => unknown> = {
  older_than_days: (v, f) => int(v, f, 0, 36500),
  retain_versions: (v, f) => int(v, f, 1, 1_000_000),
  compact_enabled: bool,
  optimize_indices_enabled: bool,
  cleanup_enabled: bool,
  target_rows_per_fragment: (v, f) => int(v, f, 1, 1 << 30),
  interval_minutes: (v, f) => int(v, f, 0, 525_600),
  fold_threshold: (v, f) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) throw new InvalidInputError(`${f} must be a number from 0 to 1`);
    return v;
  },
  indices: (v, f) => {
    if (!Array.isArray(v)) throw new InvalidInputError(`${f} must be an array of {name, column, type, params?, min_rows?}`);
    const names = new Set<string>();
    return v.map((item, i) => {
      const d = desiredIndex(item, `${f}[${i}]`);
      if (names.has(d.name)) throw new InvalidInputError(`${f} names index ${JSON.stringify(d.name)} twice`);
      names.add(d.name);
      return d;
    });
  },
};

function int(v: unknown, f: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new InvalidInputError(`${f} must be a whole number from ${min} to ${max}`);
  }
  return v;
}

function bool(v: unknown, f: string): boolean {
  if (typeof v !== 'boolean') throw new InvalidInputError(`${f} must be true or false`);
  return v;
}

function str(v: unknown, f: string): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 256) throw new InvalidInputError(`${f} must be a non-empty string`);
  return v;
}

function desiredIndex(item: unknown, f: string): DesiredIndex {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new InvalidInputError(`${f} must be an object`);
  const o = item as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!['name', 'column', 'type', 'params', 'min_rows'].includes(k)) throw new InvalidInputError(`${f} has an unknown field ${JSON.stringify(k)}`);
  }
  const type = str(o.type, `${f}.type`).toUpperCase() as IndexType;
  if (!INDEX_TYPES.includes(type)) throw new InvalidInputError(`${f}.type must be one of ${INDEX_TYPES.join(', ')}`);
  if (o.params !== undefined && (typeof o.params !== 'object' || o.params === null || Array.isArray(o.params))) {
    throw new InvalidInputError(`${f}.params must be an object`);
  }
  return {
    name: str(o.name, `${f}.name`),
    column: str(o.column, `${f}.column`),
    type,
    ...(o.params === undefined ? {} : { params: o.params as Record<string, unknown> }),
    ...(o.min_rows === undefined ? {} : { min_rows: int(o.min_rows, `${f}.min_rows`, 0, Number.MAX_SAFE_INTEGER) }),
  };
}

/** A policy body as sent to a door: known fields only, each checked; `{}` is a valid policy (all defaults). */
export function parsePolicyFields(value: unknown, field = 'policy'): PolicyFields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidInputError(`${field} must be an object or null`);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const check = FIELDS[k as keyof MaintenancePolicy];
    if (!check) {
      throw new InvalidInputError(`${field} has an unknown field ${JSON.stringify(k)}; known fields: ${Object.keys(FIELDS).join(', ')}`);
    }
    if (v === undefined || v === null) continue;
    out[k] = check(v, `${field}.${k}`);
  }
  return out as PolicyFields;
}

/** The winner's fields over the built-in defaults (never over the records it shadows). */
export function complete(fields: PolicyFields | undefined): MaintenancePolicy {
  return { ...BUILTIN_POLICY, ...(fields ?? {}) };
}

// ---- resolution ----

/** The records on the path from a table (or namespace) up to the project, nearest first. */
export interface PolicyChain {
  readonly project: string;
  readonly table?: { readonly id: readonly string[]; readonly uid: string };
  /** Nearest namespace first. */
  readonly namespaces: readonly { readonly id: readonly string[]; readonly uid: string }[];
  readonly warehouse?: WarehouseRecord;
}

/**
 * Pure winner-takes-all over records already read: the first present record, nearest first.
 * Kept separate from the reads so the table test can enumerate every combination.
 */
export function pickWinner(
  chain: PolicyChain,
  found: { table?: PolicyRecord; namespaces: readonly (PolicyRecord | undefined)[]; project?: PolicyRecord },
): EffectivePolicy {
  if (chain.table && found.table) {
    return { policy: complete(found.table.policy), source: recordSource('table', chain.table.id, policyKeys.table(chain.project, chain.table.uid), found.table) };
  }
  for (let i = 0; i < chain.namespaces.length; i++) {
    const rec = found.namespaces[i];
    if (rec) {
      const ns = chain.namespaces[i];
      return { policy: complete(rec.policy), source: recordSource('namespace', ns.id, policyKeys.namespace(chain.project, ns.uid), rec) };
    }
  }
  if (found.project) {
    return {
      policy: complete(found.project.policy),
      source: { level: 'project', name: chain.project, key: policyKeys.project(chain.project), updated_at: found.project.updatedAt },
    };
  }
  const wh = chain.warehouse?.maintenancePolicy;
  if (chain.warehouse && wh) {
    return { policy: complete(parsePolicyFields(wh, `warehouse ${chain.warehouse.name} maintenancePolicy`)), source: { level: 'warehouse', name: chain.warehouse.name } };
  }
  return { policy: BUILTIN_POLICY, source: { level: 'builtin' } };
}

function recordSource(level: 'table' | 'namespace', id: readonly string[], key: string, rec: PolicyRecord): PolicySource {
  return { level, id, key, updated_at: rec.updatedAt };
}

/** Reads the chain's policy records (in parallel: one GET each) and picks the winner. */
export async function resolvePolicy(registry: Registry, chain: PolicyChain): Promise<EffectivePolicy> {
  const read = async (key: string) => (await registry.read<PolicyRecord>(key))?.value;
  const [table, project, ...namespaces] = await Promise.all([
    chain.table ? read(policyKeys.table(chain.project, chain.table.uid)) : Promise.resolve(undefined),
    read(policyKeys.project(chain.project)),
    ...chain.namespaces.map((ns) => read(policyKeys.namespace(chain.project, ns.uid))),
  ]);
  return pickWinner(chain, { table, project, namespaces });
}

/**
 * The chain for a table or namespace from the registry: the namespace records on its path (each
 * must exist; the walker passes the ones it already read) and its warehouse.
 */
export async function chainFor(
  project: string,
  target: { table?: TableRecord; namespace?: readonly string[] },
  readNamespace: (id: readonly string[]) => Promise<NamespaceRecord | undefined>,
  readWarehouse: (name: string) => Promise<WarehouseRecord | undefined>,
): Promise<PolicyChain> {
  const nsPath = target.table ? target.table.id.slice(0, -1) : (target.namespace ?? []);
  const ids = nsPath.map((_, i) => nsPath.slice(0, i + 1));
  const records = await Promise.all(ids.map((id) => readNamespace(id)));
  const namespaces = records.map((rec, i) => {
    if (!rec) throw new NamespaceNotFoundError(`namespace ${JSON.stringify(ids[i])} does not exist`);
    return { id: ids[i], uid: rec.uid };
  });
  namespaces.reverse();
  const warehouseName = target.table?.warehouse ?? records[0]?.warehouse;
  const warehouse = warehouseName ? await readWarehouse(warehouseName) : undefined;
  return {
    project,
    ...(target.table ? { table: { id: target.table.id, uid: target.table.uid } } : {}),
    namespaces,
    ...(warehouse ? { warehouse } : {}),
  };
}

/** One-run overrides (CLI flags) shadow the effective policy for this run; the source says so. */
export function withOverrides(
  effective: EffectivePolicy,
  overrides: { olderThanDays?: number; retainVersions?: number } | undefined,
): EffectivePolicy & { readonly overrides?: Readonly<Record<string, number>> } {
  if (!overrides || (overrides.olderThanDays === undefined && overrides.retainVersions === undefined)) return effective;
  const o: Record<string, number> = {};
  if (overrides.olderThanDays !== undefined) o.older_than_days = int(overrides.olderThanDays, 'older_than_days', 0, 36500);
  if (overrides.retainVersions !== undefined) o.retain_versions = int(overrides.retainVersions, 'retain_versions', 1, 1_000_000);
  return { policy: { ...effective.policy, ...o }, source: effective.source, overrides: o };
}
