import type { JwtVerifier } from './jwt.js';

/** How a deployment authenticates callers (RASK_AUTH_MODE; docs/governance.md). */
export type AuthMode = 'off' | 'keys' | 'jwt' | 'authorizer';

export interface GuardSettings {
  readonly mode: AuthMode;
  /** SHA-256 (hex) of the configured bootstrap admin key (RASK_ADMIN_KEY), if any. */
  readonly adminKeySha256?: string;
  readonly jwt?: JwtVerifier;
  /** Where authorization decisions go (never credentials). */
  readonly log?: (entry: Record<string, unknown>) => void;
}
