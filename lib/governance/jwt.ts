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
}

export type JwtVerifier = (token: string) => Promise<string | undefined>;


/**
 * Returns the principal named by a valid token, or undefined for any invalid one (bad
 * signature, unknown key, expired, wrong issuer or audience): every failure is the same 401.
 */
export function jwtVerifier(settings: JwtSettings): JwtVerifier {
  let keys: Promise<{ jwks: JWTVerifyGetKey; verify: typeof import('jose').jwtVerify }> | undefined;
  return async (token) => {
    keys ??= import('jose').then((jose) => ({ jwks: jose.createRemoteJWKSet(new URL(settings.jwksUrl)), verify: jose.jwtVerify }));
    const { jwks, verify } = await keys;
    try {
      const { payload } = await verify(token, jwks, { issuer: settings.issuer, audience: settings.audience });
      const principal = payload[settings.principalClaim];
      return typeof principal === 'string' && principal.length > 0 && principal.length <= 128 ? principal : undefined;
    } catch {
      return undefined;
    }
  };
}
