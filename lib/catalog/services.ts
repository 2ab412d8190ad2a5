import type { ChangeLog } from '../ports/change-log.js';
import type { JobSettings } from '../queue/context.js';
import { InternalError } from '../errors.js';
import type { CredentialVendor } from '../ports/credential-vendor.js';
import type { DataEngine } from '../ports/data-engine.js';
import type { DatasetInspector } from '../ports/dataset-inspector.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import type { ObjectStore } from '../ports/object-store.js';
import type { StorageRoot } from '../ports/storage-root.js';
import type { Registry } from '../registry/registry.js';

/** What one synchronous data-plane request may do (API Gateway: 29 s; Lambda: 6 MB answers). */
export interface DataLimits {
  /** Largest QueryTable answer, in bytes of Arrow IPC; larger results are refused, never cut. */
  readonly maxResultBytes: number;
  /** Tables with more rows get no vector index built inside a request (docs/index-builds.md). */
  readonly maxSyncVectorIndexRows: number;
}

/** The deployment's default limits (RASK_QUOTA_*, RASK_RATE_PROJECT_*; lib/catalog/control/limits.ts). */
export interface DeploymentLimits {
  /** Namespaces and tables per project; 0 = no quota (lib/catalog/quotas.ts). */
  readonly quotas: { readonly namespaces: number; readonly tables: number };
  /** Requests per second per project (0 = none) and the burst. */
  readonly projectRate: { readonly perSecond: number; readonly burst: number };
  /** Requests per second per principal (0 = none) and the burst: the default a principal's own replaces. */
  readonly principalRate?: { readonly perSecond: number; readonly burst: number };
  /** Principals per deployment and unrevoked API keys per principal; 0 = no quota (lib/catalog/control/principal-quotas.ts). */
  readonly credentials?: { readonly principals: number; readonly keysPerPrincipal: number };
}

/** The storage a deployment may use (RASK_STORAGE_ROOTS locally, stack props on AWS). */
export interface DeploymentStorage {
  /** Declared roots; project P is allotted `<root>/<encoded P>/` in each (lib/catalog/control/allotment.ts). */
  readonly roots: readonly StorageRoot[];
  /** The default warehouse's root the platform creates at start-up (it lies outside every allotment). */
  readonly platformWarehouse?: StorageRoot;
}

/**
 * Everything catalog operations need, built once per process by lib/app/*.ts. Operations take
 * this as an argument and never see a Request, so they run the same behind every transport.
 */
export interface CatalogServices {
  readonly registry: Registry;
  /** The project that the spec's routes address (the hierarchy above namespaces). */
  readonly project: string;
  /** The warehouse new top-level namespaces bind to. */
  readonly defaultWarehouse: string;
  /** An object store rooted at a warehouse's storage root (table data, manifests). */
  storageFor(root: StorageRoot): ObjectStore;
  /** Short-lived, table-scoped storage credentials (none on local disk). */
  readonly vendor: CredentialVendor;
  /** Opens datasets for detailed metadata; absent in the metadata Lambda. */
  readonly inspector?: DatasetInspector;
  /**
   * The data engine the data-plane operations and job runners work through (lib/ports/data-engine.ts):
   * LanceDB in the data and jobs functions and the local server; absent in the metadata functions,
   * which never load LanceDB. Read it with `dataEngineOf`.
   */
  readonly data?: DataEngine;
  /** Bounds on synchronous data-plane work; absent means the defaults in lib/config.ts. */
  readonly dataLimits?: DataLimits;
  /**
   * The directory relative file storage roots are resolved against (the local data directory),
   * so a copied or moved data directory uses its own warehouse, never the original's. Absent:
   * a relative file root is a broken registry.
   */
  readonly fileRootBase?: string;
  /** Where asynchronous jobs (transactions) live and their timings; absent: the registry's store, defaults. */
  readonly jobs?: JobSettings;
  /** Change events (docs/events.md): doors emit through the router; maintenance passes directly. */
  readonly events?: EventPublisher;
  /**
   * Storage the platform itself uses (the registry's root): a warehouse purge refuses when its
   * root overlaps one of these (lib/catalog/control/warehouses.ts). Absent: none.
   */
  readonly reservedRoots?: readonly StorageRoot[];
  /**
   * The storage the operator declared (docs/governance.md, "Storage allotment"): where projects'
   * warehouses may lie. Absent: none, so every CreateWarehouse is refused (fail closed).
   */
  readonly storage?: DeploymentStorage;
  /**
   * Read-only mode (docs/protocols.md, "Repair on read"): set on functions whose role may only
   * read (RASK_READ_ONLY, the per-operation deployment's read operations). Read paths then never
   * write: they answer from the state they find as its protocol defines the outcome (a rename
   * by its decision, a `dropping` namespace by its drop's rule, a table's data by probing) and
   * leave the repair to the next writer or the reconcile pass. Absent: reads repair what they meet.
   */
  readonly readOnly?: boolean;
  /**
   * Set per request by the guard (lib/governance/guard.ts): `false` when the caller asked for
   * `force=true` but may not unprotect the object, so the request's force counts for nothing
   * (docs/lifecycle.md, "Force"). Absent: force counts as asked.
   */
  readonly mayOverrideProtection?: boolean;
  /**
   * The change log `GET /v1/changes` pages (lib/ports/change-log.ts; docs/events.md, "The
   * feed"). Absent: the process serves no feed.
   */
  readonly changes?: ChangeLog;
  /**
   * Set by the guard for the change feed (operation table scope `events`): whether the caller may
   * see the events of an object (lib/governance/guard.ts, `feedVisibility`). Absent: everything
   * (authentication off, or a platform administrator).
   */
  readonly mayRead?: (kind: FeedObjectKind, id: readonly string[]) => Promise<boolean>;
  /**
   * The deployment's default limits (RASK_QUOTA_*, RASK_RATE_PROJECT_*): what a project without
   * its own has (lib/catalog/control/limits.ts). Absent: none.
   */
  readonly limits?: DeploymentLimits;
  /**
   * The deployment's trash grace in days (RASK_TRASH_GRACE_DAYS, `rask:trashGraceDays`): the
   * default warehouse's, and what CreateWarehouse gives a warehouse whose request omits
   * `trash_grace_days`. Absent: 0 (drops are immediate).
   */
  readonly trashGraceDays?: number;
  now(): Date;
  newId(): string;
  /**
   * Test seam: called at each named step of a multi-step door (lib/catalog/crash-points.ts).
   * A test throws from it to leave exactly the state a crash at that step leaves. Absent in
   * production.
   */
  readonly crashPoint?: (point: string) => void | Promise<void>;
}

/**
 * The process's data engine. A composition without one (the metadata functions, a test's bare
 * services) serves no data operation: reaching one there is a wiring fault, said plainly.
 */
export function dataEngineOf(services: CatalogServices): DataEngine {
  if (!services.data) {
    throw new InternalError('this process has no data engine (CatalogServices.data): data operations run in the data function, the jobs function and the local server');
  }
  return services.data;
}

/** What an event of the change feed is about, for the guard's visibility check. */
export type FeedObjectKind = 'namespace' | 'table' | 'project' | 'admin';
