import type { JWTVerifyGetKey } from 'jose';

/**
 * OIDC bearer tokens, verified with jose against the configured issuer, audience and JWKS.
 * jose is imported on first use so that deployments with keys only never load it.
 */
export interface JwtSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly jwksUrl: string;
  /** The claim that names the principal (default `sub`). */
  readonly principalClaim: string;
  /** Oldest accepted token, by its `iat` (RASK_JWT_MAX_AGE_SECONDS). */
  readonly maxAgeSeconds: number;
}

/** The clock difference tolerated with the identity provider, on `exp`, `nbf` and `iat` (docs/governance.md). */
export const JWT_CLOCK_TOLERANCE_SECONDS = 60;

/** What a valid token proves: its principal claim, and when it stops proving it. */
export interface VerifiedToken {
  readonly subject: string;
  /** The token's `exp`, in seconds since the epoch. */
  readonly expiresAt: number;
}

export type JwtVerifier = (token: string) => Promise<VerifiedToken | undefined>;

/**
 * Returns what a valid token proves, or undefined for any invalid one (bad signature, unknown
 * key, wrong issuer or audience, no `exp` or `iat`, expired, issued in the future or longer ago
 * than the maximum age): every failure is the same 401. The time rules are jose's own options,
 * not hand-written checks (docs/governance.md, "Token rules").
 */
export function jwtVerifier(settings: JwtSettings): JwtVerifier {
  let keys: Promise<{ jwks: JWTVerifyGetKey; verify: typeof import('jose').jwtVerify }> | undefined;
  return async (token) => {
    keys ??= import('jose').then((jose) => ({ jwks: jose.createRemoteJWKSet(new URL(settings.jwksUrl)), verify: jose.jwtVerify }));
    const { jwks, verify } = await keys;
    try {
      const { payload } = await verify(token, jwks, {
        issuer: settings.issuer,
        audience: settings.audience,
        // A token without `exp` would never expire; `maxTokenAge` also needs `iat` and refuses
        // one in the future beyond the tolerance.
        requiredClaims: ['exp', 'iat'],
        maxTokenAge: settings.maxAgeSeconds,
        clockTolerance: JWT_CLOCK_TOLERANCE_SECONDS,
      });
      const principal = payload[settings.principalClaim];
      if (typeof principal !== 'string' || principal.length === 0 || principal.length > 128) return undefined;
      return { subject: principal, expiresAt: payload.exp! };
    } catch {
      return undefined;
    }
  };
}
