import { randomBytes } from 'node:crypto';
import type { CatalogServices } from '../services.js';
import { InvalidInputError } from '../../errors.js';
import type { Caller } from '../../contract/request.js';
import type { PageInput } from './projects.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { encodeSegment } from '../../registry/keys.js';
import type { Registry } from '../../registry/registry.js';
import { alreadyExists, CREATE_HINT, notFound, q } from './errors.js';
import { govKeys } from '../../registry/principal-keys.js';
import { BOOTSTRAP_PRINCIPAL, readPrincipal, sha256Hex } from '../../auth/credentials.js';
import { reserveKeySlot, reservePrincipalSlot } from './principal-quotas.js';
import { forgetPrincipal } from './principal-cache.js';
import type { QuotaHold } from '../quotas.js';

export { BOOTSTRAP_PRINCIPAL, principalOfKey, readPrincipal, sha256Hex } from '../../auth/credentials.js';
import type { ApiKeyRecord, PrincipalRecord } from '../../registry/principal-records.js';

/**
 * Principals and their API keys. A key is `rask_<keyId>_<secret>`: the key id finds the record
 * in one GET, and only the secret's SHA-256 is stored, compared in constant time. The secret is
 * in the create answer and nowhere else (a secret is never stored in plain text nor logged).
 */

async function requirePrincipal(services: CatalogServices, name: string): Promise<PrincipalRecord> {
  if (name.length === 0 || name.length > 128) throw notFound(`principal ${q(name)}`, CREATE_HINT.principal);
  const found = await readPrincipal(services.registry, name);
  if (!found) throw notFound(`principal ${q(name)}`, CREATE_HINT.principal);
  return found;
}

/** A principal's name: 1–128 characters of A-Z a-z 0-9 _ . @ : - starting with a letter or digit. */
export const PRINCIPAL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,127}$/;
export const PRINCIPAL_NAME_RULE = 'principal name must be 1–128 characters of A-Z a-z 0-9 _ . @ : - starting with a letter or digit';

export async function createPrincipal(services: CatalogServices, input: { readonly name: string; readonly platformAdmin?: boolean }) {
  const { name } = input;
  if (!PRINCIPAL_NAME.test(name)) throw new InvalidInputError(PRINCIPAL_NAME_RULE);
  const record: PrincipalRecord = {
    kind: 'principal',
    name,
    platformAdmin: input.platformAdmin ?? false,
    createdAt: services.now().toISOString(),
  };
  await holding(await reservePrincipalSlot(services, name), async () => {
    try {
      await services.registry.create(govKeys.principal(name), record);
    } catch (err) {
      if (err instanceof ConditionFailedError) throw alreadyExists(`principal ${q(name)}`);
      throw err;
    }
  });
  // A name looked up before it existed is cached as missing.
  forgetPrincipal(services.registry, name);
  return { name, platform_admin: record.platformAdmin, created_at: record.createdAt };
}

export async function listPrincipals(services: CatalogServices, page: PageInput) {
  const listed = await services.registry.listNames(govKeys.principalsPrefix(), { startAfter: page.pageToken, limit: page.limit, encode: encodeSegment });
  return { principals: listed.names, page_token: listed.more ? listed.names[listed.names.length - 1] : null };
}

/**
 * Mints a key; the answer is the only place its secret ever appears. `expires_at` (optional, ISO
 * 8601, in the future) ends it; a caller whose own credential expires (an OIDC token, an expiring
 * key) mints keys that expire no later than it does — by default exactly then — so a short
 * session never becomes a permanent credential (docs/governance.md, "Key expiry").
 */
export async function createApiKey(
  services: CatalogServices,
  principal: string,
  input: { readonly expiresAt?: string } = {},
  caller?: Caller,
  keyId = randomBytes(8).toString('hex'),
) {
  const now = services.now();
  const requested = keyExpiry(input.expiresAt, now);
  const ceiling = caller?.expiresAt;
  if (requested && ceiling && Date.parse(requested) > Date.parse(ceiling)) {
    throw new InvalidInputError(
      `expires_at ${requested} is later than the credential this request is made with (it expires at ${ceiling}): a key may not outlive the credential that mints it`,
    );
  }
  await requirePrincipal(services, principal);
  // A slot of the principal's key quota first (lib/catalog/control/principal-quotas.ts).
  const hold = await reserveKeySlot(services, principal, keyId);
  return holding(hold, () => mintKey(services.registry, principal, keyId, now, requested ?? ceiling));
}

/** Runs a create under its quota slot: a refusal that wrote nothing gives the slot back. */
async function holding<T>(hold: QuotaHold | undefined, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (err) {
    await hold?.failed(err);
    throw err;
  }
}

/** The form `expires_at` must have: an ISO 8601 date-time with a time zone (the decoder checks it). */
export const KEY_EXPIRY_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
export const KEY_EXPIRY_RULE = 'expires_at must be an ISO 8601 date-time with a time zone, e.g. 2030-01-31T12:00:00Z';

/** A requested expiry (of KEY_EXPIRY_FORM), in the future; normalized to UTC. */
function keyExpiry(value: string | undefined, now: Date): string | undefined {
  if (value === undefined) return undefined;
  const ms = KEY_EXPIRY_FORM.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new InvalidInputError(KEY_EXPIRY_RULE);
  if (ms <= now.getTime()) throw new InvalidInputError(`expires_at ${value} is not in the future`);
  return new Date(ms).toISOString();
}

export async function mintKey(registry: Registry, principal: string, keyId: string, now: Date, expiresAt?: string) {
  const secret = randomBytes(32).toString('base64url');
  const record: ApiKeyRecord = {
    kind: 'api-key',
    keyId,
    principal,
    secretSha256: sha256Hex(secret),
    createdAt: now.toISOString(),
    ...(expiresAt ? { expiresAt } : {}),
  };
  await registry.create(govKeys.apiKey(keyId), record);
  return { key_id: keyId, principal, api_key: `rask_${keyId}_${secret}`, created_at: record.createdAt, expires_at: record.expiresAt ?? null };
}

/** A principal's keys, without secrets. Scans the key records: keys are few per deployment. */
export async function listApiKeys(services: CatalogServices, principal: string) {
  await requirePrincipal(services, principal);
  const out: { key_id: string; created_at: string; revoked_at: string | null; expires_at: string | null }[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.store.list({ prefix: govKeys.apiKeysPrefix(), startAfter, limit: 1000 });
    for (const obj of page.objects) {
      const rec = (await services.registry.read<ApiKeyRecord>(obj.key))?.value;
      if (rec?.principal === principal) {
        out.push({ key_id: rec.keyId, created_at: rec.createdAt, revoked_at: rec.revokedAt ?? null, expires_at: rec.expiresAt ?? null });
      }
    }
    if (!page.truncated || page.objects.length === 0) return { keys: out };
    startAfter = page.objects[page.objects.length - 1].key;
  }
}

export async function revokeApiKey(services: CatalogServices, principal: string, keyId: string) {
  await requirePrincipal(services, principal);
  return services.registry.retrying(`revoke key ${q(keyId)}`, async () => {
    const found = /^[a-z0-9]{1,32}$/.test(keyId) ? await services.registry.read<ApiKeyRecord>(govKeys.apiKey(keyId)) : undefined;
    if (!found || found.value.principal !== principal) throw notFound(`API key ${q(keyId)} of principal ${q(principal)}`);
    if (!found.value.revokedAt) {
      await services.registry.replace(govKeys.apiKey(keyId), { ...found.value, revokedAt: services.now().toISOString() }, found.etag);
    }
    return { key_id: keyId, principal, revoked: true };
  });
}

/**
 * First start with keys on and no RASK_ADMIN_KEY: creates the `admin` platform administrator
 * and its `bootstrap` key, and returns the key so the caller can print it once. Later starts
 * find the key record and return undefined (the secret cannot be shown again: only its hash exists).
 */
export async function ensureBootstrapKey(registry: Registry, now: Date): Promise<string | undefined> {
  const admin: PrincipalRecord = { kind: 'principal', name: BOOTSTRAP_PRINCIPAL, platformAdmin: true, createdAt: now.toISOString() };
  try {
    await registry.create(govKeys.principal(BOOTSTRAP_PRINCIPAL), admin);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
  try {
    return (await mintKey(registry, BOOTSTRAP_PRINCIPAL, 'bootstrap', now)).api_key;
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}
