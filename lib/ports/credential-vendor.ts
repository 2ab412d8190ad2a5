import type { StorageRoot } from './storage-root.js';
import type { Identity } from '../contract/request.js';

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
 * omits `storage_options` (the spec types it as an optional, non-nullable object), which Lance
 * treats as "use your own".
 */
export interface CredentialVendor {
  vend(request: VendRequest): Promise<Record<string, string> | undefined>;
}

/** Local disk needs no credentials. */
export const noCredentials: CredentialVendor = { vend: async () => undefined };

/**
 * Characters that IAM reads as wildcards (`*`, `?`) or policy variables (`${…}`) in a resource
 * or condition. A location carrying one would turn a per-table session policy into a policy over
 * everything the pattern matches (`s3://wh/warehouse/*` = the whole warehouse), so locations
 * that reach a policy must not contain them. Answers the offending sequence, if any.
 */
export function iamPatternIn(text: string): string | undefined {
  return /\*|\?|\$\{/.exec(text)?.[0];
}
