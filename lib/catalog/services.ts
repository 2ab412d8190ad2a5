import type { CredentialVendor } from '../ports/credential-vendor.js';
import type { DatasetInspector } from '../ports/dataset-inspector.js';
import type { ObjectStore } from '../ports/object-store.js';
import type { StorageRoot } from '../registry/records.js';
import type { Registry } from '../registry/registry.js';

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
  now(): Date;
  newId(): string;
}
