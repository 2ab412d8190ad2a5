import { ConfigError } from '../config.js';
import type { Registry } from '../registry/registry.js';
import type { AuthMode, GuardSettings } from './settings.js';
import { jwtVerifier } from './jwt.js';
import { ensureBootstrapKey, sha256Hex } from '../catalog/control/principals.js';

/** The auth settings of the local server and the AWS functions, from RASK_* configuration. */
export interface AuthConfig {
  readonly RASK_ADMIN_KEY?: string;
  readonly RASK_JWT_ISSUER?: string;
  readonly RASK_JWT_AUDIENCE?: string;
  readonly RASK_JWT_JWKS_URL?: string;
  readonly RASK_JWT_PRINCIPAL_CLAIM: string;
  readonly RASK_JWT_MAX_AGE_SECONDS: number;
}

export function guardSettings(mode: AuthMode, config: AuthConfig, log?: GuardSettings['log']): GuardSettings {
  const jwtConfigured = Boolean(config.RASK_JWT_ISSUER || config.RASK_JWT_AUDIENCE || config.RASK_JWT_JWKS_URL);
  if ((mode === 'jwt' || jwtConfigured) && !(config.RASK_JWT_ISSUER && config.RASK_JWT_AUDIENCE && config.RASK_JWT_JWKS_URL)) {
    throw new ConfigError('invalid configuration: RASK_JWT_ISSUER, RASK_JWT_AUDIENCE and RASK_JWT_JWKS_URL are all required for OIDC tokens');
  }
  return {
    mode,
    ...(config.RASK_ADMIN_KEY ? { adminKeySha256: sha256Hex(config.RASK_ADMIN_KEY) } : {}),
    ...(mode === 'jwt' || (mode === 'authorizer' && jwtConfigured)
      ? {
          jwt: jwtVerifier({
            issuer: config.RASK_JWT_ISSUER!,
            audience: config.RASK_JWT_AUDIENCE!,
            jwksUrl: config.RASK_JWT_JWKS_URL!,
            principalClaim: config.RASK_JWT_PRINCIPAL_CLAIM,
            maxAgeSeconds: config.RASK_JWT_MAX_AGE_SECONDS,
          }),
        }
      : {}),
    ...(log ? { log } : {}),
  };
}

/** What the local server tells its operator at start-up about authentication. */
export async function localAuthNotices(mode: AuthMode, config: AuthConfig, registry: Registry): Promise<string[]> {
  if (mode === 'off') {
    return [
      'WARNING: RASK_AUTH=off: every caller may do everything. Web pages are kept out (Host and Origin are checked), programs on this machine are not. Set RASK_AUTH=keys (or jwt) to require API keys (docs/governance.md, "Threat model of the local server").',
    ];
  }
  if (config.RASK_ADMIN_KEY) return [`RASK_AUTH=${mode}: the bootstrap admin key is RASK_ADMIN_KEY`];
  const generated = await ensureBootstrapKey(registry, new Date());
  return generated
    ? [`RASK_AUTH=${mode}: generated the bootstrap admin key (shown once, only its hash is stored): ${generated}`]
    : [`RASK_AUTH=${mode}: the bootstrap admin key was generated at the first start (set RASK_ADMIN_KEY to use your own)`];
}
