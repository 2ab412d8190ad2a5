import { randomUUID } from 'node:crypto';
import type { CatalogServices, DataLimits, DeploymentStorage } from '../catalog/services.js';
import type { ErrorLogger } from '../http/respond.js';
import type { JobSettings } from '../queue/context.js';
import type { CredentialVendor } from '../ports/credential-vendor.js';
import type { DataEngine } from '../ports/data-engine.js';
import type { DatasetInspector } from '../ports/dataset-inspector.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import type { ChangeLog } from '../ports/change-log.js';
import type { ObjectStore } from '../ports/object-store.js';
import { rememberWarehouse } from '../catalog/warehouses.js';
import { rememberProject } from '../catalog/control/project-cache.js';
import { openRegistry } from '../registry/layout.js';
import type { StorageRoot } from '../ports/storage-root.js';
import { Registry } from '../registry/registry.js';
import { tracedEngine } from '../observability/traced-engine.js';
import { tracedStore } from '../observability/traced-store.js';
import type { RateLimits } from '../http/rate-limit.js';
import { NO_CREDENTIAL_QUOTAS, type CredentialQuotas } from '../catalog/control/principal-quotas.js';
import { NO_QUOTAS, type QuotaDefaults } from '../catalog/quotas.js';

/**
 * The catalog's services without a router (buildServices): what a process that serves no request
 * needs — the jobs function. Apart from build.ts so that such a process's bundle never reaches the
 * request guard, and through it the policy engine (test/infra/bundle.test.ts).
 */

/**
 * What a process brings of the data plane, each bundle its own (docs/architecture.md): the data
 * engine, and the inspector DescribeTable's detailed metadata reads datasets through. The data
 * and jobs functions bring LanceDB; the metadata functions an inspector that invokes the data
 * function, and no engine.
 */
export interface DataPlane {
  readonly engine?: DataEngine;
  readonly inspector?: DatasetInspector;
}

export interface ServiceOptions {
  readonly registryStore: ObjectStore;
  readonly storageFor: (root: StorageRoot) => ObjectStore;
  readonly project: string;
  readonly warehouse: string;
  readonly warehouseRoot: StorageRoot;
  readonly managedVersioning: boolean;
  readonly trashGraceDays: number;
  /** RASK_LOG_LEVEL=debug: trace each request into the logger's debug lines (docs/operations.md). */
  readonly traceRequests?: boolean;
  readonly vendor: CredentialVendor;
  readonly inspector?: DatasetInspector;
  /** The data engine (CatalogServices.data); absent: the process serves no data operation. */
  readonly data?: DataEngine;
  readonly dataLimits?: DataLimits;
  /** Where change events go (docs/events.md); absent: none are emitted. */
  readonly events?: EventPublisher;
  /** The change log `GET /v1/changes` pages (docs/events.md, "The feed"); absent: no feed. */
  readonly changes?: ChangeLog;
  /** Where jobs live; absent: the registry's store. */
  readonly jobs?: JobSettings;
  /** Storage a warehouse purge must never touch (the registry's root). */
  readonly reservedRoots?: readonly StorageRoot[];
  /** The storage the operator declared (CatalogServices.storage). */
  readonly storage?: DeploymentStorage;
  /** Relative file storage roots resolve against this directory (lib/catalog/warehouses.ts). */
  readonly fileRootBase?: string;
  /** Read-only mode (RASK_READ_ONLY, CatalogServices.readOnly): start-up and read paths never write. */
  readonly readOnly?: boolean;
  /** Object quotas per project (RASK_QUOTA_*; lib/catalog/quotas.ts); absent: none by default (a project's own still apply). */
  readonly quotas?: QuotaDefaults;
  /** Request rates per principal and per project (RASK_RATE_*); absent or 0: off. */
  readonly rateLimits?: RateLimits;
  /** Principals per deployment and API keys per principal (RASK_QUOTA_PRINCIPALS, RASK_QUOTA_KEYS_PER_PRINCIPAL); absent: none. */
  readonly credentialQuotas?: CredentialQuotas;
}

/** Opens the registry (the default project and warehouse) and wires the ports into services. */
export async function buildServices(options: ServiceOptions): Promise<CatalogServices> {
  // At debug, every registry key a request touches is a trace line (docs/operations.md).
  const registry = new Registry(options.traceRequests ? tracedStore(options.registryStore) : options.registryStore);
  const { warehouse, project } = await openRegistry(registry, {
    project: options.project,
    warehouse: options.warehouse,
    storage: options.warehouseRoot,
    managedVersioning: options.managedVersioning,
    trashGraceDays: options.trashGraceDays,
  }, { readOnly: options.readOnly });
  rememberWarehouse(registry, options.project, warehouse, options.fileRootBase);
  if (project) rememberProject(registry, options.project, project);
  const services: CatalogServices = {
    registry,
    project: options.project,
    defaultWarehouse: options.warehouse,
    storageFor: options.storageFor,
    vendor: options.vendor,
    inspector: options.inspector,
    // At debug, each call into the data engine is a timed step of its request.
    ...(options.data ? { data: options.traceRequests ? tracedEngine(options.data) : options.data } : {}),
    dataLimits: options.dataLimits,
    events: options.events,
    ...(options.changes ? { changes: options.changes } : {}),
    ...(options.jobs ? { jobs: options.jobs } : {}),
    reservedRoots: options.reservedRoots,
    trashGraceDays: options.trashGraceDays,
    // The default warehouse's root as recorded (an older deployment may keep another one).
    ...(options.storage ? { storage: { ...options.storage, platformWarehouse: warehouse.storage } } : {}),
    ...(options.fileRootBase === undefined ? {} : { fileRootBase: options.fileRootBase }),
    ...(options.readOnly ? { readOnly: true } : {}),
    limits: {
      quotas: options.quotas ?? NO_QUOTAS,
      projectRate: options.rateLimits?.project ?? { perSecond: 0, burst: 1 },
      principalRate: options.rateLimits?.principal ?? { perSecond: 0, burst: 1 },
      credentials: options.credentialQuotas ?? NO_CREDENTIAL_QUOTAS,
    },
    now: () => new Date(),
    newId: () => randomUUID(),
  };
  return services;
}

/**
 * Where the guard's authorization decisions go: the app's logger at info, so they obey
 * RASK_LOG_LEVEL and RASK_LOG_FORMAT and carry its request ids (never credentials).
 */
export const decisionLog =
  (logger: ErrorLogger) =>
  ({ message, ...fields }: Record<string, unknown>): void =>
    logger.info?.(String(message), fields);

/** Structured logs on stderr; never given request bodies or credentials. */
export const consoleLogger: ErrorLogger = {
  error: (message, fields) => console.error(JSON.stringify({ level: 'error', message, ...fields })),
  warn: (message, fields) => console.error(JSON.stringify({ level: 'warn', message, ...fields })),
  info: (message, fields) => console.log(JSON.stringify({ level: 'info', message, ...fields })),
};
