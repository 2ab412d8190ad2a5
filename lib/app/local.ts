import { mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { resolveStorageRoot } from '../catalog/warehouses.js';
import { FsObjectStore } from '../adapters/local/fs-object-store.js';
import { credentialQuotasOf, quotaDefaultsOf, rateLimitsOf, requestLimitsOf, type LocalConfig } from '../config.js';
import type { HandlerMap } from '../contract/request.js';
import type { CatalogServices } from '../catalog/services.js';
import type { ObjectStore } from '../ports/object-store.js';
import type { StorageRoot } from '../ports/storage-root.js';
import { noCredentials } from '../ports/credential-vendor.js';
import type { DataEngine } from '../ports/data-engine.js';
import type { TaskTier } from '../queue/context.js';
import { ndjsonChangeLog } from '../adapters/local/ndjson-change-log.js';
import { journaled, RegistryJournal } from '../adapters/local/registry-journal.js';
import { logPublisher } from '../ports/event-publisher.js';
import { buildApp, consoleLogger, decisionLog } from './build.js';
import { adoptLocalWarehouseRoot, localWarehouseRoot } from './local-root.js';
import { declaredRoots, localStorageDefault, realLocalRoots } from './storage.js';
import type { ErrorLogger } from '../http/respond.js';
import { guardSettings, localAuthNotices } from '../governance/setup.js';

/**
 * The local composition: registry and the default warehouse on disk under RASK_DATA_DIR.
 * `handlers` defaults to every implemented operation (metadata and data plane).
 */
export async function createLocalApp(
  config: LocalConfig,
  options: {
    handlers?: HandlerMap<CatalogServices>;
    logger?: ErrorLogger;
    /** The data engine; absent: the process's LanceDB engine. A test may bring a twin (test/support/counting-engine.ts). */
    engine?: DataEngine;
    /**
     * The task tier (the server's child processes: lib/app/server.ts). Every service carries it,
     * not only the job loop: a door or a pass that queues a job routes it by its estimate, and a
     * cancel stops its task.
     */
    tasks?: TaskTier;
  } = {},
) {
  const dataDir = path.resolve(config.RASK_DATA_DIR);
  await mkdir(dataDir, { recursive: true });
  const handlers = options.handlers ?? (await import('../operations/handlers-all.js')).allHandlers;
  // One process serves both bundles, so DescribeTable's load_detailed_metadata can open datasets.
  // Importing the adapter loads nothing heavy: LanceDB itself is loaded on first use.
  const { engineInspector } = await import('../adapters/lance/inspector.js');
  const engine = options.engine ?? (await import('../adapters/lance/shared-engine.js')).sharedEngine();
  const stores = new Map<string, ObjectStore>();
  const storageFor = (root: StorageRoot): ObjectStore => {
    if (root.kind !== 'file') throw new Error(`the local server only has file storage, not ${root.kind}`);
    // A warehouse record read directly (maintenance walks, governance doors) may carry the default
    // warehouse's root relative to the data directory, as it is stored (lib/app/local-root.ts).
    const resolved = resolveStorageRoot(root, dataDir);
    const dir = resolved.kind === 'file' ? resolved.path : root.path;
    const cached = stores.get(dir);
    if (cached) return cached;
    const store = new FsObjectStore(dir);
    stores.set(dir, store);
    return store;
  };
  const logger = options.logger ?? consoleLogger;
  // The platform's own locations (never a warehouse's), by both spellings of the data directory.
  const realDataDir = await realpath(dataDir);
  const reservedRoots: StorageRoot[] = [...new Set([dataDir, realDataDir])].flatMap((dir) =>
    ['registry', 'events', 'registry-journal'].map((sub) => ({ kind: 'file' as const, path: path.join(dir, sub) })),
  );
  const storageRoots = await realLocalRoots(declaredRoots(config.RASK_STORAGE_ROOTS, localStorageDefault(dataDir), 'file', reservedRoots));
  const changes = ndjsonChangeLog({ dir: path.join(dataDir, 'events'), retentionDays: config.RASK_CHANGES_RETENTION_DAYS, stdout: config.RASK_EVENTS_STDOUT });
  const auth = guardSettings(config.RASK_AUTH, config, decisionLog(logger));
  // The registry's history (docs/operations.md, "Registry backup and restore"): every write journaled.
  const registryStore = new FsObjectStore(path.join(dataDir, 'registry'));
  const history =
    config.RASK_REGISTRY_HISTORY_DAYS > 0
      ? await RegistryJournal.open(registryStore, { dir: path.join(dataDir, 'registry-journal'), retentionMs: config.RASK_REGISTRY_HISTORY_DAYS * 86_400_000 })
      : undefined;
  const app = await buildApp({
    registryStore: history ? journaled(registryStore, history) : registryStore,
    storageFor,
    project: config.RASK_PROJECT,
    warehouse: config.RASK_WAREHOUSE,
    // Relative to the data directory, so a copy of the directory uses its own warehouse.
    warehouseRoot: localWarehouseRoot(config.RASK_WAREHOUSE),
    fileRootBase: dataDir,
    redactPaths: [dataDir, ...(realDataDir === dataDir ? [] : [realDataDir])],
    managedVersioning: config.RASK_MANAGED_VERSIONING,
    trashGraceDays: config.RASK_TRASH_GRACE_DAYS,
    handlers,
    vendor: noCredentials,
    inspector: engineInspector(engine),
    data: engine,
    dataLimits: {
      maxResultBytes: config.RASK_MAX_RESULT_BYTES,
      maxSyncVectorIndexRows: config.RASK_MAX_SYNC_VECTOR_INDEX_ROWS,
    },
    maxBodyBytes: config.RASK_MAX_BODY_BYTES,
    requestLimits: requestLimitsOf(config),
    commitDeadlineMs: config.RASK_COMMIT_DEADLINE_MS,
    idempotencyTtlSeconds: config.RASK_IDEMPOTENCY_TTL_SECONDS,
    rateLimits: rateLimitsOf(config),
    quotas: quotaDefaultsOf(config),
    credentialQuotas: credentialQuotasOf(config),
    // One log: the doors append to it, the feed pages it (docs/events.md, "The feed").
    events: logPublisher(changes, (message, fields) => logger.error(message, fields)),
    changes,
    logger,
    traceRequests: config.RASK_LOG_LEVEL === 'debug',
    auth,
    reservedRoots,
    storage: { roots: storageRoots },
    jobs: { policy: { leaseMs: config.RASK_JOBS_LEASE_MS, heartbeatMs: config.RASK_JOBS_HEARTBEAT_MS }, ...(options.tasks ? { tasks: options.tasks } : {}) },
  });
  await adoptLocalWarehouseRoot(app.services.registry, { project: config.RASK_PROJECT, warehouse: config.RASK_WAREHOUSE, dataDir });
  const notices = await localAuthNotices(config.RASK_AUTH, config, app.services.registry);
  return { ...app, dataDir, notices, changes, history };
}
