/** Registry record shapes. Stored as JSON; changing a shape needs a layout migration. */

export type StorageRoot =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 's3'; readonly bucket: string; readonly prefix: string; readonly region?: string };

export interface ProjectRecord {
  readonly kind: 'project';
  readonly name: string;
  readonly createdAt: string;
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
  readonly createdAt: string;
}

export interface NamespaceRecord {
  readonly kind: 'namespace';
  readonly id: readonly string[];
  /** Unique per creation, so a re-created name is a different object. */
  readonly uid: string;
  /** The warehouse binding; children inherit their parent's. */
  readonly warehouse: string;
  readonly properties: Readonly<Record<string, string>>;
  /**
   * `dropping` is set (by compare-and-swap) before a drop looks for children. A create that
   * finds its parent `dropping` or gone after writing its own record withdraws it, so no child
   * survives a drop that did not see it (docs/architecture.md, "creating under a drop").
   */
  readonly state: 'active' | 'dropping';
  readonly createdAt: string;
}
