import type { StorageRoot } from '../ports/storage-root.js';

/** Registry record shapes. Stored as JSON; changing a shape needs a layout migration. */

export interface ProjectRecord {
  readonly kind: 'project';
  /**
   * This project's own limits, set by a platform administrator (POST /v1/limits;
   * docs/operations.md, "Object quotas" and "Rate limits"): object quotas (0 = none) and a request
   * rate. Kept here because every request reads this record anyway (cached), so a project
   * without any costs its creates no read. Absent: the deployment's defaults.
   */
  readonly limits?: ProjectLimits;
  readonly name: string;
  readonly createdAt: string;
  /** Free text shown by DescribeProject. Optional fields need no layout migration. */
  readonly description?: string;
  /** Where new top-level namespaces bind; absent: the configured default (default project) or none. */
  readonly defaultWarehouse?: string;
  /**
   * Warehouses quarantined by DeactivateWarehouse. Kept on the project record because every
   * request reads it anyway (lib/governance/guard.ts), so quarantine costs no extra read.
   */
  readonly deactivatedWarehouses?: readonly string[];
  /**
   * Storage a platform administrator allotted to this project beyond its default allotment
   * (`<declared root>/<project>/`, docs/governance.md "Storage allotment"). Optional: no migration.
   */
  readonly storageRoots?: readonly StorageRoot[];
  /**
   * Created since has-data markers exist (lib/catalog/protocols/markers.ts): every table ever in it
   * keeps its marker, so ListAllTables `include_declared=false` lists the project's markers.
   * Absent: a project from before, which is probed table by table.
   */
  readonly tableMarkers?: boolean;
  /**
   * Unique per creation. Grants carry it, so a grant left behind by a deleted project never
   * applies to a re-created one of the same name. Absent on the start-up default project.
   */
  readonly uid?: string;
  /** The principal that created it: an admin of the project from the same write (no second record). */
  readonly createdBy?: string;
  /**
   * Protection (docs/lifecycle.md): set through the update door by an admin; a protected project
   * refuses delete (409 / 19 naming it) unless the request says `force=true`. A flag on the
   * record, so it dies with the record: a re-created name starts unprotected.
   */
  readonly protection?: { readonly setAt: string; readonly setBy: string };
}

export interface WarehouseRecord {
  readonly kind: 'warehouse';
  readonly project: string;
  readonly name: string;
  readonly storage: StorageRoot;
  /** New tables are declared with managed versioning (the catalog arbitrates commits). */
  readonly managedVersioning: boolean;
  /** Days a dropped table stays recoverable; 0 = drops are final. */
  readonly trashGraceDays: number;
  /**
   * The warehouse's default maintenance policy (fields as in lib/maintenance/policy.ts): what a
   * table gets when no table, namespace or project record sets one. Optional: no migration.
   */
  readonly maintenancePolicy?: Readonly<Record<string, unknown>>;
  /**
   * Protection (docs/lifecycle.md): set through the update door by an admin; a protected warehouse
   * refuses delete (409 / 19 naming it) unless the request says `force=true`. A flag on the
   * record, so it dies with the record: a re-created name starts unprotected.
   */
  readonly protection?: { readonly setAt: string; readonly setBy: string };
  readonly createdAt: string;
}

export interface NamespaceRecord {
  readonly kind: 'namespace';
  readonly id: readonly string[];
  /** Unique per creation, so a re-created name is a different object. */
  readonly uid: string;
  /** The warehouse binding; children inherit their parent's. */
  readonly warehouse: string;
  /**
   * Set on namespaces created since has-data markers exist: every table ever in it keeps its
   * marker (markers.ts), so `include_declared=false` lists the markers. Without it (an older
   * namespace) the listing probes each table's storage, as it always did.
   */
  readonly tableMarkers?: boolean;
  /**
   * As on tables (TableRecord.mayBeProtected): every creation writes `false`, the protection
   * door sets it `true` (compare-and-swap) before it writes the protection record, and nothing
   * sets it back. DescribeNamespace reads the protection record only when this is not `false`.
   */
  readonly mayBeProtected?: boolean;
  readonly properties: Readonly<Record<string, string>>;
  /**
   * `dropping` is set (by compare-and-swap) before a drop looks for children. A create that
   * finds its parent `dropping` or gone after writing its own record withdraws it, so no child
   * survives a drop that did not see it (docs/architecture.md, "creating under a drop").
   */
  readonly state: 'active' | 'dropping';
  /**
   * Set with `dropping`: what the drop was asked to do, so whoever meets the mark after the
   * dropping request died can finish or undo it the same way (docs/protocols.md). A mark
   * without it (written before it existed) is settled as `restrict`: undone unless empty.
   */
  readonly drop?: {
    readonly behavior: 'restrict' | 'cascade';
    readonly nonce: string;
    readonly since: string;
    /**
     * A cascade in a warehouse with trash grace detaches the subtree instead of destroying it
     * (lib/catalog/namespaces/trash-records.ts): the context every object of the subtree is
     * filed under, copied onto each descendant's mark so whoever finishes an interrupted drop
     * files the rest the same way.
     */
    readonly trash?: SubtreeDrop;
    /** `purge=true`: destroy now even though the warehouse keeps dropped tables. */
    readonly purge?: boolean;
  };
  readonly createdAt: string;
}

/** One recoverable cascade drop: every trash record it files carries it (one shared deadline). */
export interface SubtreeDrop {
  /** The namespace the drop was asked for: the one `POST /v1/namespace/{id}/undrop` names. */
  readonly root: readonly string[];
  /** Unique per drop: tells this drop's records from an earlier drop of the same name. */
  readonly dropId: string;
  readonly droppedAt: string;
  readonly expiresAt: string;
  readonly droppedBy: string;
}

export interface TableRecord {
  readonly kind: 'table';
  readonly id: readonly string[];
  /** Unique per creation (declare or register); a re-created name is a different table. */
  readonly uid: string;
  readonly warehouse: string;
  /**
   * Where the dataset lives, relative to the warehouse's storage root. Allocated once and kept
   * across renames; never derived from the name again.
   */
  readonly path: string;
  /** The catalog arbitrates commits (CreateTableVersion); fixed for the table's whole life. */
  readonly managedVersioning: boolean;
  readonly properties: Readonly<Record<string, string>>;
  /**
   * Table-level schema metadata set through UpdateTableSchemaMetadata, kept here so a metadata
   * change never rewrites (or even re-commits) the dataset. It overlays the dataset's own schema
   * metadata: a string value wins, `null` hides the dataset's key (a recorded deletion).
   * Optional, so records written before it existed need no migration.
   * See lib/catalog/tables/schema-metadata.ts.
   */
  readonly schemaMetadata?: Readonly<Record<string, string | null>>;
  /**
   * The definitions of the table's indices on main (name, column, type, parameters), recorded
   * when an index is built through the catalog or first seen by the index builder, so the index
   * builder can rebuild an index a write dropped (lib/catalog/data/index-definitions.ts,
   * docs/index-builds.md "Index definitions"). Optional: no migration.
   */
  readonly indexDefinitions?: readonly IndexDefinition[];
  /**
   * Names dropped with DropTableIndex: written before the drop, so an index builder that saw the
   * index a moment earlier never records it again; cleared once the index is gone.
   */
  readonly droppedIndices?: readonly DroppedIndex[];
  /** How the table came to be: declared by a client or registered over existing data. */
  readonly origin: 'declared' | 'registered';
  /**
   * Whether a protection record may exist for this table (docs/lifecycle.md). Every creation
   * writes `false`; the protection door sets it `true` (compare-and-swap) before it writes the
   * protection record, and nothing sets it back. The doors that refuse protected tables (drop,
   * deregister, rename) read the protection record, which stays the source of truth, only when
   * this is not `false`, so an unprotected table costs them no request. Absent on records
   * written before it existed: those doors read the protection record, as they always did.
   */
  readonly mayBeProtected?: boolean;
  /**
   * Set when a reader of the trash found this table live beside a trash record of it (a drop or
   * an undrop that a fault stopped; lib/catalog/protocols/trash.ts, settleTrashEntry) and settled
   * it: the id that trash record was filed under, so a retried undrop of that id answers the
   * table it brought back instead of "nothing in trash".
   */
  readonly trashSettled?: { readonly from: readonly string[] };
  /**
   * Which has-data marker this table keeps at its id (lib/catalog/protocols/markers.ts): `none`, a
   * managed-versioning table with no commit yet (declared only; its first commit or first write
   * sets `data` after writing the marker); `data`, known to have data; `maybe`, a table whose
   * client commits straight to storage, probed by the listing. Absent on records written before
   * markers existed: treated as `maybe` wherever a marker is moved or removed.
   */
  readonly dataMarker?: 'none' | 'data' | 'maybe';
  readonly createdAt: string;
  /**
   * Absent (or `active`) for a live table. The other states exist only while a rename is in
   * flight (docs/protocols.md, "RenameTable"): `moving` on the source and `arriving` on the
   * destination until the move is decided, then `moved` on the source until the destination is
   * live. Readers never answer from them: lib/catalog/protocols/move.ts finishes or undoes the
   * move first. Optional, so records written before renames existed need no migration.
   */
  readonly state?: 'active' | 'moving' | 'arriving' | 'moved';
  /** The in-flight rename: `to` on the source's record, `from` on the destination's; `nonce` pairs them. */
  readonly move?: TableMove;
}

/** One index definition (TableRecord.indexDefinitions): what a rebuild needs. */
export interface IndexDefinition {
  readonly name: string;
  readonly column: string;
  /** The index type as CreateTableIndex names it (BTREE, FTS, IVF_PQ, …). */
  readonly type: string;
  /** The request's other index fields (snake_case, as in CreateTableIndexRequest). */
  readonly params?: Readonly<Record<string, string | number | boolean>>;
  /** `catalog`: built through CreateTableIndex; `discovered`: first seen by the index builder. */
  readonly source: 'catalog' | 'discovered';
  readonly recordedAt: string;
}

/** An index dropped through the catalog (TableRecord.droppedIndices). */
export interface DroppedIndex {
  readonly name: string;
  readonly droppedAt: string;
}

export interface TableMove {
  /** Unique per rename attempt, so a stale arrival can never be mistaken for a current one. */
  readonly nonce: string;
  readonly to?: readonly string[];
  readonly from?: readonly string[];
  /**
   * On an arrival written alongside its source's mark: the etag that mark is conditional on.
   * While the source is still at it, the mark may yet land (docs/protocols.md, "RenameTable").
   * Absent on an arrival written once the source carried the nonce.
   */
  readonly sourceEtag?: string;
}

/**
 * Protection of one namespace or table (lib/lifecycle/protection.ts): a record beside the
 * object's, never in its schema metadata, so it cannot be unset through the properties door and
 * setting it never creates a table version. It names the object's `uid`: a record whose uid is
 * not the live object's belongs to an object that is gone, and protects nothing, so a re-created
 * name never inherits it.
 */
export interface ProtectionRecord {
  readonly kind: 'protection';
  readonly object: 'namespace' | 'table';
  readonly id: readonly string[];
  readonly uid: string;
  readonly setAt: string;
  readonly setBy: string;
}

/**
 * A table dropped recoverably (warehouse trash grace days > 0): the table record as it was, so
 * undrop can re-register it unchanged (same uid, location, properties), and when it may be purged.
 */
export interface TrashRecord {
  readonly kind: 'trash';
  readonly object: 'table';
  readonly table: TableRecord;
  readonly droppedAt: string;
  readonly expiresAt: string;
  readonly droppedBy: string;
  /** Set when the table went with a namespace subtree (a recoverable cascade drop). */
  readonly subtree?: { readonly root: readonly string[]; readonly dropId: string };
  /**
   * Not a drop: a DeclareTable that gave the table up (the name was taken, the record withdrawn
   * or never known to land) and whose release of its fresh location claim failed every attempt
   * files this under the name, where the next read of the name's trash finds it and takes the
   * claim back (lib/catalog/protocols/trash.ts, settleWithdrawal; docs/protocols.md, "What is left
   * after a 503 whose look failed too"). Never listed, never undropped.
   */
  readonly withdrawn?: true;
}

/**
 * A namespace detached by a recoverable cascade drop (keys.namespaceTrash): its record as it was
 * (uid, properties, warehouse binding), so the namespace undrop can rebuild it unchanged.
 */
export interface NamespaceTrashRecord {
  readonly kind: 'trash';
  readonly object: 'namespace';
  readonly namespace: NamespaceRecord;
  readonly droppedAt: string;
  readonly expiresAt: string;
  readonly droppedBy: string;
  readonly subtree: { readonly root: readonly string[]; readonly dropId: string };
}

/**
 * A claim on a table location (keys.locationClaim): at most one table may use a location, and
 * this record is the put-if-absent that makes it so. Created before the table record (declare,
 * register), released after it is gone (deregister, drop once the bytes are deleted).
 */
export interface LocationClaimRecord {
  readonly kind: 'location-claim';
  readonly warehouse: string;
  /** The location, relative to the warehouse root (also encoded in the key). */
  readonly path: string;
  /** The uid of the table that owns the location; a drop purges bytes only under its own claim. */
  readonly uid: string;
  /**
   * The ids where the owner's record may be found. One, except during a rename (source and
   * destination). A claim none of whose ids holds a record at this location is stale: its
   * owner was removed by a request that ended before releasing it, and it may be taken over.
   */
  readonly ids: readonly (readonly string[])[];
  /**
   * `pending` from the claim until the owner's record is written, then `held`. A pending claim
   * whose record is not there (yet, or ever: its request died) may be taken over; the owner
   * notices when it confirms and withdraws. `purging`: the owner was dropped and its bytes are
   * being deleted (or failed to be). `trashed`: the owner was dropped recoverably and its
   * record sits in trash (TrashRecord); the location stays reserved until undrop or purge.
   */
  readonly state: 'pending' | 'held' | 'purging' | 'trashed';
  readonly createdAt: string;
}

/** One warehouse's storage root in the storage-claims index (lib/catalog/storage-claims.ts). */
export interface RootClaim {
  readonly project: string;
  readonly warehouse: string;
  /** As the warehouse record stores it (the local default warehouse: relative to the data directory). */
  readonly storage: StorageRoot;
  /** Tells this create's claim from a later one of the same name. */
  readonly id: string;
  readonly claimedAt: string;
}

export interface StorageClaimsRecord {
  readonly kind: 'storage-claims';
  readonly claims: readonly RootClaim[];
}

/** A project's own limits (ProjectRecord.limits); every field optional, absent = the default. */
export interface ProjectLimits {
  readonly namespaces?: number;
  readonly tables?: number;
  /** Requests per second across the project (0 = none) and the burst. */
  readonly rate?: { readonly perSecond: number; readonly burst: number };
}
