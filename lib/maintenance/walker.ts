/**
 * "For every table of every warehouse": the one walk the per-table maintenance passes share.
 *
 * Projects and warehouses are enumerated from the registry on every run (never a configured
 * list, docs/rules.md rule 12): a warehouse added a minute ago is swept on the next pass. Tables
 * are found by listing the project's tree prefix in byte order, one LIST per page of keys, so
 * the walk order is the byte order of the tables' registry keys and a cursor is simply the last
 * finished key: resuming is a LIST starting after it, never a rescan.
 *
 * The walker reads; what happens to each table is the pass's business. Units whose record or
 * warehouse cannot be read are reported as problems, and the run is marked incomplete.
 */
import { resolveStorageRoot } from '../catalog/warehouses.js';
import type { CatalogServices } from '../catalog/services.js';
import { absoluteLocation } from '../catalog/dataset/location.js';
import type { ObjectStore } from '../ports/object-store.js';
import { decodeSegment, encodeSegment, keys, parseTreeKey } from '../registry/keys.js';
import type { NamespaceRecord, TableRecord, WarehouseRecord } from '../registry/records.js';
import type { PassOptions, PassScope } from './pass.js';
import { chainFor, resolvePolicy, withOverrides, type EffectivePolicy } from './policy.js';

export interface TableUnit {
  readonly project: string;
  /** The table's registry key: the walk order and the cursor. */
  readonly key: string;
  readonly id: readonly string[];
  readonly record: TableRecord;
  readonly etag: string;
  readonly warehouse: WarehouseRecord;
  /** The warehouse's object store (keys relative to its root). */
  readonly store: ObjectStore;
  /** Absolute dataset location (local path or s3:// URI). */
  readonly location: string;
  /** Services addressed to the unit's project (the catalog's doors read `services.project`). */
  readonly services: CatalogServices;
  /** The effective policy with its source, after this run's overrides. */
  policy(): Promise<EffectivePolicy & { readonly overrides?: Readonly<Record<string, number>> }>;
}

export interface WalkResult {
  /** Set when the deadline stopped the walk: the last finished unit's key, to resume after. */
  readonly cursor?: string;
  readonly visited: number;
  readonly complete: boolean;
  readonly problems: readonly string[];
  /**
   * Set when the walk was scoped to a table or namespace that does not exist (one of `problems`
   * says so in words): callers that answer 404 for it test this, never the problem's text, which
   * may quote a storage error that happens to read "does not exist" (S3's NoSuchBucket).
   */
  readonly scopeMissing?: boolean;
}

const PAGE = 1000;

/** Every project in the registry, or only the services' project when the walk is scoped. */
async function projects(services: CatalogServices, scope: PassScope | undefined): Promise<string[]> {
  if (scope?.namespace || scope?.table) return [services.project];
  const out: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.listNames(keys.projectsPrefix(), { startAfter, limit: PAGE, encode: encodeSegment });
    out.push(...page.names);
    if (!page.more) return out;
    startAfter = page.names[page.names.length - 1];
  }
}

/** The project's warehouses, read from the registry each run. */
async function warehouses(services: CatalogServices, project: string, problems: string[]): Promise<Map<string, WarehouseRecord>> {
  const prefix = keys.warehousesPrefix(project);
  const out = new Map<string, WarehouseRecord>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.store.list({ prefix, startAfter, limit: PAGE });
    const records = await Promise.all(
      page.objects.map((o) =>
        services.registry.read<WarehouseRecord>(o.key).catch((err: unknown) => {
          // Its tables are then reported one by one as bound to a warehouse we could not read.
          problems.push(`warehouse record ${o.key}: ${(err as Error).message}`);
          return undefined;
        }),
      ),
    );
    // As the doors see it: a relative file root (the local default warehouse) resolved.
    for (const r of records) if (r) out.set(r.value.name, { ...r.value, storage: resolveStorageRoot(r.value.storage, services.fileRootBase) });
    const last = page.objects[page.objects.length - 1];
    if (!page.truncated || !last) return out;
    startAfter = last.key;
  }
}

/** Cursor: `<project>\n<table key>`; opaque to callers. */
function encodeCursor(project: string, key: string): string {
  return `${project}\n${key}`;
}

function decodeCursor(cursor: string | undefined): { project: string; key: string } | undefined {
  if (!cursor) return undefined;
  const nl = cursor.indexOf('\n');
  return nl < 0 ? undefined : { project: cursor.slice(0, nl), key: cursor.slice(nl + 1) };
}

/**
 * Calls `visit` for each table in scope, in registry-key order, until done or the deadline.
 * Units are visited one at a time: a sweep rewrites bytes and must not pile up work on storage.
 */
export async function forEachTable(
  services: CatalogServices,
  options: PassOptions,
  visit: (unit: TableUnit) => Promise<void>,
): Promise<WalkResult> {
  const problems: string[] = [];
  const after = decodeCursor(options.cursor);
  let visited = 0;
  let lastKey: { project: string; key: string } | undefined;
  const projectNames = (await projects(services, options.scope)).filter((p) => !after || p >= after.project);

  for (const project of projectNames) {
    const scoped: CatalogServices = project === services.project ? services : { ...services, project };
    const houses = await warehouses(services, project, problems);
    const nsCache = new Map<string, Promise<NamespaceRecord | undefined>>();
    const readNs = (id: readonly string[]) => {
      const k = JSON.stringify(id);
      let hit = nsCache.get(k);
      if (!hit) nsCache.set(k, (hit = services.registry.read<NamespaceRecord>(keys.namespace(project, id)).then((r) => r?.value)));
      return hit;
    };
    const readWh = async (name: string) => houses.get(name);

    const prefix = options.scope?.table
      ? keys.table(project, options.scope.table)
      : keys.subtree(project, options.scope?.namespace ?? []);
    let startAfter = after && after.project === project ? after.key : undefined;
    for (;;) {
      const page = await services.registry.store.list({ prefix, startAfter, limit: PAGE });
      for (const obj of page.objects) {
        if (options.scope?.table && obj.key !== prefix) continue;
        const parsed = parseTreeKey(project, obj.key);
        if (parsed?.kind !== 'table') continue;
        if (options.deadline !== undefined && Date.now() >= options.deadline) {
          return { cursor: lastKey ? encodeCursor(lastKey.project, lastKey.key) : options.cursor, visited, complete: false, problems };
        }
        let found;
        try {
          found = await services.registry.read<TableRecord>(obj.key);
        } catch (err) {
          problems.push(`table ${JSON.stringify(parsed.id)} of project ${project}: ${(err as Error).message}`);
          continue;
        }
        if (!found) continue; // removed since the listing
        const record = found.value;
        const warehouse = houses.get(record.warehouse);
        if (!warehouse) {
          problems.push(`table ${JSON.stringify(parsed.id)} of project ${project} is bound to warehouse ${JSON.stringify(record.warehouse)}, which is not in the registry or could not be read`);
          continue;
        }
        let cached: ReturnType<TableUnit['policy']> | undefined;
        const unit: TableUnit = {
          project,
          key: obj.key,
          id: parsed.id,
          record,
          etag: found.etag,
          warehouse,
          store: services.storageFor(warehouse.storage),
          location: absoluteLocation(warehouse.storage, record.path),
          services: scoped,
          policy: () =>
            (cached ??= (async () => {
              const chain = await chainFor(project, { table: record }, readNs, readWh);
              return withOverrides(await resolvePolicy(services.registry, chain), options.overrides);
            })()),
        };
        try {
          await visit(unit);
        } catch (err) {
          problems.push(`table ${JSON.stringify(parsed.id)} of project ${project}: ${(err as Error).message}`);
        }
        visited++;
        lastKey = { project, key: obj.key };
        options.onProgress?.({ done: visited, unit: parsed.id.join('.') });
      }
      const last = page.objects[page.objects.length - 1];
      if (!page.truncated || !last) break;
      startAfter = last.key;
    }
  }
  const missing = visited === 0 && !after && (await scopeMissing(services, options.scope, problems));
  return { visited, complete: problems.length === 0, problems, ...(missing ? { scopeMissing: true } : {}) };
}

/**
 * A named table or namespace that does not exist is a problem, not an empty success: a typo in
 * `--table` would otherwise exit 0 having done nothing. A namespace without tables is fine.
 */
async function scopeMissing(services: CatalogServices, scope: PassScope | undefined, problems: string[]): Promise<boolean> {
  if (scope?.table) {
    // The walk visits a table that exists; here it met none (or could not read it: already a problem).
    if (problems.length > 0) return false;
    problems.push(`table "${scope.table.join('.')}" does not exist in project ${services.project}`);
    return true;
  }
  if (scope?.namespace?.length) {
    const found = await services.registry.store.head(keys.namespace(services.project, scope.namespace));
    if (found) return false;
    problems.push(`namespace "${scope.namespace.join('.')}" does not exist in project ${services.project}`);
    return true;
  }
  return false;
}

/** The project name a registry key belongs to (`p/<P>/…`), for reports. */
export function projectOfKey(key: string): string | undefined {
  const m = /^p\/([^/]+)\//.exec(key);
  return m ? decodeSegment(m[1]) : undefined;
}
