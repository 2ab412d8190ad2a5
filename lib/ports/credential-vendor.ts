import type { StorageRoot } from '../registry/records.js';
import type { Identity } from '../operations/types.js';

/** What a caller may do with the vended credentials. */
export type AccessMode = 'read' | 'readwrite';

export interface VendRequest {
  readonly identity: Identity;
  /** Warehouse storage root and the table's path under it: the scope of the credentials. */
  readonly root: StorageRoot;
  readonly tablePath: string;
  readonly mode: AccessMode;
}

/**
 * Hands out short-lived storage credentials scoped to one table, as Lance `storage_options`
 * (all values strings). `undefined` means "nothing to vend" (local disk): the response then
 * carries `storage_options: null`, which Lance treats as "use your own".
 */
export interface CredentialVendor {
  vend(request: VendRequest): Promise<Record<string, string> | undefined>;
}

/** Local disk needs no credentials. */
export const noCredentials: CredentialVendor = { vend: async () => undefined };
