/**
 * Registry records of the control plane that have no spec counterpart: principals, their API
 * keys and their grants. Project and warehouse records live in lib/registry/records.ts.
 */

export type Role = 'admin' | 'writer' | 'reader';
export const ROLES: readonly Role[] = ['admin', 'writer', 'reader'];

/** A caller: a person or a service. Global (not per project); grants are per project. */
export interface PrincipalRecord {
  readonly kind: 'principal';
  readonly name: string;
  /** Platform administrators may do everything, including create projects. */
  readonly platformAdmin: boolean;
  readonly createdAt: string;
  /** Its own limits, set by a platform administrator (SetPrincipalLimits); absent: the deployment's defaults. */
  readonly limits?: PrincipalLimits;
}

/**
 * A principal's own limits (docs/operations.md, "Per-principal limits"): its request rate (the
 * principal's bucket; its projects' buckets still apply) and how many unrevoked API keys it may hold.
 */
export interface PrincipalLimits {
  readonly rate?: { readonly perSecond: number; readonly burst: number };
  readonly keys?: number;
}

/**
 * An API key. The secret is never stored: only its SHA-256 (hex). The key id is the public
 * half of the presented key (`rask_<keyId>_<secret>`), so a check is one GET, not a scan.
 */
export interface ApiKeyRecord {
  readonly kind: 'api-key';
  readonly keyId: string;
  readonly principal: string;
  readonly secretSha256: string;
  readonly createdAt: string;
  readonly revokedAt?: string;
  /** ISO 8601; from then on the key is refused like a revoked one. Absent: it never expires. */
  readonly expiresAt?: string;
}

/** Where a grant applies: the whole project, a namespace subtree, or one table. */
export type GrantScope =
  | { readonly kind: 'project' }
  | { readonly kind: 'namespace'; readonly id: readonly string[] }
  | { readonly kind: 'table'; readonly id: readonly string[] };

export interface Grant {
  readonly role: Role;
  readonly scope: GrantScope;
  /**
   * For a namespace or table scope: the uid of the object the grant was made on. The grant
   * counts only while that object holds the name (live, or in trash there), so a re-created
   * name never inherits it (lib/catalog/control/grants.ts, boundGrants). Absent on grants written
   * before grants were bound: those follow the name, as they always did.
   */
  readonly uid?: string;
}

/** Every grant of one principal in one project: one record, so a request reads one object. */
export interface GrantsRecord {
  readonly kind: 'grants';
  readonly project: string;
  readonly principal: string;
  readonly grants: readonly Grant[];
}
