import { randomUUID } from 'node:crypto';
import type { CatalogServices, DataLimits, DeploymentStorage } from '../catalog/services.js';
import { createRouter, type Router } from '../http/router.js';
import type { ErrorLogger } from '../http/respond.js';
import type { RequestLimits } from '../http/limits.js';
import type { JobSettings } from '../queue/context.js';
import type { HandlerMap } from '../contract/request.js';
import { UNSUPPORTED_REASONS } from '../contract/unsupported.js';
import type { CredentialVendor } from '../ports/credential-vendor.js';
import type { DataEngine } from '../ports/data-engine.js';
import type { DatasetInspector } from '../ports/dataset-inspector.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import type { ChangeLog } from '../ports/change-log.js';
import { auditDenied, withEvents } from '../operations/emit.js';
import type { ObjectStore } from '../ports/object-store.js';
import { rememberWarehouse } from '../catalog/warehouses.js';
import { openRegistry } from '../registry/layout.js';
import type { StorageRoot } from '../ports/storage-root.js';
import { Registry } from '../registry/registry.js';
import { guardFor } from '../governance/guard.js';
import { admitting } from '../operations/admission.js';
import type { GuardSettings } from '../governance/settings.js';
import { cachedProject } from '../catalog/control/project-cache.js';
import { tracedEngine } from '../observability/traced-engine.js';
import { tracedStore } from '../observability/traced-store.js';
import { ObjectStoreIdempotency } from '../registry/idempotency-records.js';
import { DEFAULT_COMMIT_DEADLINE_MS } from '../deadline.js';
import { type Limiter, NO_RATES, RateLimiter, type RateLimits } from '../http/rate-limit.js';
import { SharedRateLimiter } from '../http/shared-rate-limit.js';
import type { RateBucketStore } from '../ports/rate-buckets.js';
import { cachedPrincipal } from '../catalog/control/principal-cache.js';
import { NO_CREDENTIAL_QUOTAS, type CredentialQuotas } from '../catalog/control/principal-quotas.js';
import { quotaAdmission } from '../operations/quota-admission.js';
import { NO_QUOTAS, type QuotaDefaults } from '../catalog/quotas.js';

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

export interface BuildOptions {
  readonly registryStore: ObjectStore;
  readonly storageFor: (root: StorageRoot) => ObjectStore;
  readonly project: string;
  readonly warehouse: string;
  readonly warehouseRoot: StorageRoot;
  readonly managedVersioning: boolean;
  readonly trashGraceDays: number;
  readonly handlers: HandlerMap<CatalogServices>;
  readonly maxBodyBytes: number;
  /** JSON depth and properties caps (lib/http/limits.ts); absent: the defaults. */
  readonly requestLimits?: RequestLimits;
  /** RASK_LOG_LEVEL=debug: trace each request into the logger's debug lines (docs/operations.md). */
  readonly traceRequests?: boolean;
  readonly logger?: ErrorLogger;
  readonly vendor: CredentialVendor;
  readonly inspector?: DatasetInspector;
  /** The data engine (CatalogServices.data); absent: the process serves no data operation. */
  readonly data?: DataEngine;
  readonly dataLimits?: DataLimits;
  /** Per-request commit deadline (RASK_COMMIT_DEADLINE_MS). */
  readonly commitDeadlineMs?: number;
  /** Where change events go (docs/events.md); absent: none are emitted. */
  readonly events?: EventPublisher;
  /** The change log `GET /v1/changes` pages (docs/events.md, "The feed"); absent: no feed. */
  readonly changes?: ChangeLog;
  /** Where jobs live; absent: the registry's store. */
  readonly jobs?: JobSettings;
  /** Authentication and authorization (docs/governance.md); absent: off. */
  readonly auth?: GuardSettings;
  /** Storage a warehouse purge must never touch (the registry's root). */
  readonly reservedRoots?: readonly StorageRoot[];
  /** The storage the operator declared (CatalogServices.storage). */
  readonly storage?: DeploymentStorage;
  /** Relative file storage roots resolve against this directory (lib/catalog/warehouses.ts). */
  readonly fileRootBase?: string;
  /** Local directories that never appear in an error body (the data directory). */
  readonly redactPaths?: readonly string[];
  /** Read-only mode (RASK_READ_ONLY, CatalogServices.readOnly): start-up and read paths never write. */
  readonly readOnly?: boolean;
  /** How long an Idempotency-Key's answer is kept (RASK_IDEMPOTENCY_TTL_SECONDS); absent: keys are ignored. */
  readonly idempotencyTtlSeconds?: number;
  /** Object quotas per project (RASK_QUOTA_*; lib/catalog/quotas.ts); absent: none by default (a project's own still apply). */
  readonly quotas?: QuotaDefaults;
  /** Request rates per principal and per project (RASK_RATE_*); absent or 0: off. */
  readonly rateLimits?: RateLimits;
  /**
   * Buckets shared by every container of the deployment (lib/http/shared-rate-limit.ts): on AWS
   * the work-queue table; absent (locally): each process keeps its own buckets.
   */
  readonly rateBuckets?: RateBucketStore;
  /** Principals per deployment and API keys per principal (RASK_QUOTA_PRINCIPALS, RASK_QUOTA_KEYS_PER_PRINCIPAL); absent: none. */
  readonly credentialQuotas?: CredentialQuotas;
  /** The clock of idempotency keys and rate limits (tests); default the system's. */
  readonly now?: () => Date;
}

/** Wires ports into services and services into the router; shared by every entry point. */
export async function buildApp(options: BuildOptions): Promise<{ router: Router; services: CatalogServices }> {
  // At debug, every registry key a request touches is a trace line (docs/operations.md).
  const registry = new Registry(options.traceRequests ? tracedStore(options.registryStore) : options.registryStore);
  const warehouse = await openRegistry(registry, {
    project: options.project,
    warehouse: options.warehouse,
    storage: options.warehouseRoot,
    managedVersioning: options.managedVersioning,
    trashGraceDays: options.trashGraceDays,
  }, { readOnly: options.readOnly });
  rememberWarehouse(registry, options.project, warehouse, options.fileRootBase);
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
  const router = createRouter({
    handlers: options.events ? withEvents(options.handlers, options.events) : options.handlers,
    services,
    maxBodyBytes: options.maxBodyBytes,
    ...(options.requestLimits ? { requestLimits: options.requestLimits } : {}),
    ...(options.traceRequests && options.logger?.debug ? { trace: options.logger as Required<Pick<ErrorLogger, 'debug'>> } : {}),
    logger: options.logger,
    unsupportedReasons: UNSUPPORTED_REASONS,
    commitDeadlineMs: options.commitDeadlineMs,
    guard: admitting(guardFor(options.auth ?? { mode: 'off' }, services)),
    onDenied: options.events
      ? auditDenied(options.events, options.project, async (project) => (await cachedProject(registry, project)) !== undefined)
      : undefined,
    ...(options.redactPaths ? { redactPaths: options.redactPaths } : {}),
    // Always on: a platform administrator may give any project a quota at run time (one read per create).
    quotas: quotaAdmission,
    // Always on, like quotas: a project may have its own rate (POST /v1/limits), read from the
    // project record the guard has just read (cached), so a request pays nothing for it.
    rateLimits: {
      limiter: limiterFor(options),
      projectOf: (scoped: CatalogServices) => scoped.project,
      projectRate: async (scoped: CatalogServices) => (await cachedProject(registry, scoped.project))?.limits?.rate,
      // A principal's own rate (SetPrincipalLimits), from its cached record: one GET per 30 s.
      principalRate: async (principal: string) => (await cachedPrincipal(registry, principal))?.limits?.rate,
    },
    // Kept beside the registry's records (a directory locally, the registry bucket on AWS). A
    // read-only process writes nothing, so it keeps no keys (its writes are refused anyway).
    ...(options.idempotencyTtlSeconds && !options.readOnly
      ? {
          idempotency: {
            store: new ObjectStoreIdempotency(options.registryStore),
            ttlMs: options.idempotencyTtlSeconds * 1000,
            leaseMs: idempotencyLeaseMs(options.commitDeadlineMs ?? DEFAULT_COMMIT_DEADLINE_MS),
            ...(options.now ? { now: options.now } : {}),
          },
        }
      : {}),
  });
  return { router, services };
}

/**
 * How long an unfinished idempotency claim blocks its key: twice the request's deadline and 30 s
 * more, so a request still running (a door stops at its deadline, Lambda at its timeout) is never
 * run a second time beside it, and a claim whose process died frees its key within ~80 s.
 */
export const idempotencyLeaseMs = (commitDeadlineMs: number): number => 2 * commitDeadlineMs + 30_000;

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

/** Shared buckets where the deployment has a store for them (AWS), else this process's own. */
function limiterFor(options: BuildOptions): Limiter {
  const limits = options.rateLimits ?? NO_RATES;
  const nowMs = options.now ? () => options.now!().getTime() : Date.now;
  if (!options.rateBuckets) return new RateLimiter(limits, nowMs);
  return new SharedRateLimiter(limits, {
    store: options.rateBuckets,
    nowMs,
    onStoreError: (err) => options.logger?.warn('shared rate buckets unreachable; this container limits on its own', { err: String(err) }),
  });
}
