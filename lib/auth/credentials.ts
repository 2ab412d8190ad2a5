import { createHash, timingSafeEqual } from 'node:crypto';
import type { Registry } from '../registry/registry.js';
import { govKeys } from '../registry/principal-keys.js';
import type { ApiKeyRecord, PrincipalRecord } from '../registry/principal-records.js';

/**
 * Checking a presented API key: shared by the local guard and the API Gateway authorizer, so it
 * imports nothing of the catalog (the authorizer bundle stays small).
 */

const KEY_PATTERN = /^rask_([a-z0-9]{1,32})_([A-Za-z0-9_-]{20,100})$/;

export const sha256Hex = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

export async function readPrincipal(registry: Registry, name: string): Promise<PrincipalRecord | undefined> {
  return (await registry.read<PrincipalRecord>(govKeys.principal(name)))?.value;
}

/**
 * The principal a presented API key belongs to and when the key expires, or undefined (unknown,
 * revoked, expired or wrong secret: the same 401 for all).
 */
export async function principalOfKey(
  registry: Registry,
  presented: string,
  now: Date = new Date(),
): Promise<{ principal: string; expiresAt?: string } | undefined> {
  const m = KEY_PATTERN.exec(presented);
  if (!m) return undefined;
  const rec = (await registry.read<ApiKeyRecord>(govKeys.apiKey(m[1])))?.value;
  if (!rec || rec.revokedAt) return undefined;
  const a = Buffer.from(sha256Hex(m[2]), 'hex');
  const b = Buffer.from(rec.secretSha256, 'hex');
  if (a.length !== b.length || !timingSafeEqual(a, b)) return undefined;
  if (rec.expiresAt !== undefined && !(Date.parse(rec.expiresAt) > now.getTime())) return undefined;
  return { principal: rec.principal, ...(rec.expiresAt !== undefined ? { expiresAt: rec.expiresAt } : {}) };
}

/** The principal the bootstrap admin key maps to. */
export const BOOTSTRAP_PRINCIPAL = 'admin';

