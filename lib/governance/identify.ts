import { timingSafeEqual } from 'node:crypto';
import type { CatalogServices } from '../catalog/services.js';
import type { Caller } from '../contract/request.js';
import type { GuardSettings } from './settings.js';
import { BOOTSTRAP_PRINCIPAL, principalOfKey, readPrincipal, sha256Hex } from '../auth/credentials.js';

/** The prefix of principals named by OIDC tokens. */
export const OIDC_PREFIX = 'oidc:';

/** Looks like a compact JWS (three base64url parts); API keys never do. */
export const looksLikeJwt = (token: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);

/**
 * Authentication only (no policy engine), so the API Gateway authorizer can share it with the
 * local guard without bundling Cedar.
 */
/** Shared with the AWS authorizer: which principal (if any) the presented credentials prove. */
export async function identify(
  settings: Pick<GuardSettings, 'adminKeySha256' | 'jwt' | 'mode'>,
  services: Pick<CatalogServices, 'registry'> & Partial<Pick<CatalogServices, 'now'>>,
  presented: readonly string[],
): Promise<Caller | undefined> {
  for (const credential of presented) {
    if (settings.adminKeySha256) {
      const a = Buffer.from(sha256Hex(credential), 'hex');
      const b = Buffer.from(settings.adminKeySha256, 'hex');
      if (a.length === b.length && timingSafeEqual(a, b)) return { principal: BOOTSTRAP_PRINCIPAL, platformAdmin: true, via: 'admin-key' };
    }
    let proven: { principal: string; expiresAt?: string } | undefined;
    let via: Caller['via'] = 'api-key';
    if (settings.jwt && looksLikeJwt(credential)) {
      // Token subjects get their own names (`oidc:<claim>`): an identity provider's user called
      // "admin" must never be the bootstrap administrator or any key-holding principal.
      const token = await settings.jwt(credential);
      proven = token && { principal: `${OIDC_PREFIX}${token.subject}`, expiresAt: new Date(token.expiresAt * 1000).toISOString() };
      via = 'jwt';
    } else {
      proven = await principalOfKey(services.registry, credential, services.now?.());
    }
    if (!proven) continue;
    const record = await readPrincipal(services.registry, proven.principal);
    // A key outlives nothing: a deleted principal's keys stop working. A token's subject
    // needs no record (it is known to the identity provider); a record can make it an admin.
    if (!record && via !== 'jwt') continue;
    return { principal: proven.principal, platformAdmin: record?.platformAdmin ?? false, via, ...(proven.expiresAt ? { expiresAt: proven.expiresAt } : {}) };
  }
  return undefined;
}
