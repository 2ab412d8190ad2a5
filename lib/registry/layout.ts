import { InternalError, ServiceUnavailableError } from '../errors.js';
import { ConditionFailedError } from '../ports/object-store.js';
import { keys } from './keys.js';
import type { ProjectRecord, WarehouseRecord } from './records.js';
import type { StorageRoot } from '../ports/storage-root.js';
import type { Registry } from './registry.js';

/** Version of the key layout and record shapes (lib/registry/keys.ts). */
export const LAYOUT_VERSION = 1;

interface LayoutRecord {
  readonly version: number;
  readonly createdAt: string;
}

/**
 * Migrations from layout N to N+1, applied in order at start-up. Empty while only layout 1 exists;
 * a future change to the key encoding adds an entry here instead of editing keys.ts in place.
 */
export const MIGRATIONS: Readonly<Record<number, (registry: Registry) => Promise<void>>> = {};

/** Writes the layout record on a fresh registry and refuses a registry it cannot read. */
export async function ensureLayout(registry: Registry): Promise<number> {
  await createIfAbsent<LayoutRecord>(registry, keys.layout(), {
    version: LAYOUT_VERSION,
    createdAt: new Date().toISOString(),
  });
  for (;;) {
    const current = await registry.read<LayoutRecord>(keys.layout());
    if (!current) throw new InternalError('registry layout record vanished during start-up');
    const version = current.value.version;
    if (version === LAYOUT_VERSION) return version;
    if (version > LAYOUT_VERSION) {
      throw new InternalError(
        `registry layout ${version} is newer than this server understands (${LAYOUT_VERSION}); upgrade rask`,
      );
    }
    const migrate = MIGRATIONS[version];
    if (!migrate) throw new InternalError(`no migration from registry layout ${version}`);
    await migrate(registry);
    await registry.replace<LayoutRecord>(keys.layout(), { ...current.value, version: version + 1 }, current.etag);
  }
}

export interface DefaultsSpec {
  readonly project: string;
  readonly warehouse: string;
  readonly storage: StorageRoot;
  readonly managedVersioning: boolean;
  readonly trashGraceDays: number;
}

/** The default project and warehouse, so spec clients need not know the hierarchy. Idempotent. */
export async function ensureDefaults(registry: Registry, spec: DefaultsSpec): Promise<void> {
  const createdAt = new Date().toISOString();
  await createIfAbsent<ProjectRecord>(registry, keys.project(spec.project), {
    kind: 'project',
    name: spec.project,
    createdAt,
    // A fresh registry: every table it will hold keeps its has-data marker (markers.ts).
    tableMarkers: true,
  });
  await createIfAbsent<WarehouseRecord>(registry, keys.warehouse(spec.project, spec.warehouse), defaultWarehouseRecord(spec, createdAt));
}

/**
 * Start-up in one round trip on an initialised registry: the layout, project and warehouse
 * records are read together and only the missing ones are written (a put-if-absent that loses
 * to a concurrent container is fine: the record is then there). A container that starts on a
 * registry another one already set up makes three GETs and no write, where writing first made
 * three conditional PUTs that all failed with 412 plus a GET. Answers the warehouse record and
 * the project record it read (none when it had to write the defaults), so the caller can serve
 * the first request without reading either again (a cold start read the project twice:
 * docs/benchmarks.md, "On a quiet machine").
 */
export async function openRegistry(
  registry: Registry,
  spec: DefaultsSpec,
  options: { readOnly?: boolean } = {},
): Promise<{ warehouse: WarehouseRecord; project?: ProjectRecord }> {
  const [layout, project, warehouse] = await Promise.all([
    registry.read<LayoutRecord>(keys.layout()),
    registry.read<ProjectRecord>(keys.project(spec.project)),
    registry.read<WarehouseRecord>(keys.warehouse(spec.project, spec.warehouse)),
  ]);
  if (options.readOnly) return { warehouse: openReadOnly(layout?.value.version, warehouse?.value, spec), ...(project ? { project: project.value } : {}) };
  // Anything but the current layout goes the long way (create, refuse newer, migrate older)
  // before the defaults are touched: a layout this server does not understand is never written to.
  if (layout?.value.version !== LAYOUT_VERSION) await ensureLayout(registry);
  if (project && warehouse && layout?.value.version === LAYOUT_VERSION) return { warehouse: warehouse.value, project: project.value };
  await ensureDefaults(registry, spec);
  const written = await registry.read<WarehouseRecord>(keys.warehouse(spec.project, spec.warehouse));
  if (!written) throw new InternalError(`warehouse ${JSON.stringify(spec.warehouse)} vanished during start-up`);
  return { warehouse: written.value };
}

async function createIfAbsent<T>(registry: Registry, key: string, value: T): Promise<void> {
  try {
    await registry.create(key, value);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}

/**
 * Start-up of a function that may not write (read-only mode, docs/protocols.md): nothing is
 * created or migrated. A fresh registry reads as an empty catalog whose default warehouse is the
 * one a writer's start-up will record (`defaultWarehouseRecord`); a layout other than this
 * server's is refused, an older one until a writer has migrated it.
 */
function openReadOnly(layout: number | undefined, warehouse: WarehouseRecord | undefined, spec: DefaultsSpec): WarehouseRecord {
  if (layout !== undefined && layout > LAYOUT_VERSION) {
    throw new InternalError(`registry layout ${layout} is newer than this server understands (${LAYOUT_VERSION}); upgrade rask`);
  }
  if (layout !== undefined && layout < LAYOUT_VERSION) {
    throw new ServiceUnavailableError(
      `registry layout ${layout} awaits its migration to ${LAYOUT_VERSION}, which a read-only function does not run; any write request runs it`,
    );
  }
  return warehouse ?? defaultWarehouseRecord(spec, new Date().toISOString());
}

/** The default warehouse record as ensureDefaults writes it. */
function defaultWarehouseRecord(spec: DefaultsSpec, createdAt: string): WarehouseRecord {
  return {
    kind: 'warehouse',
    project: spec.project,
    name: spec.warehouse,
    storage: spec.storage,
    managedVersioning: spec.managedVersioning,
    trashGraceDays: spec.trashGraceDays,
    createdAt,
  };
}
