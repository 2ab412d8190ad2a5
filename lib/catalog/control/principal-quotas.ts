import { forEachLimited } from '../../concurrency.js';
import { QuotaExceededError } from '../../errors.js';
import type { ApiKeyRecord } from '../../registry/principal-records.js';
import { govKeys } from '../../registry/principal-keys.js';
import { recountSlots, reserveSlots, type QuotaHold, type Scan, type SlotCounter } from '../quotas.js';
import type { CatalogServices } from '../services.js';
import { cachedPrincipal, PRINCIPAL_CACHE_MS } from './principal-cache.js';

/**
 * Quotas on the credentials (issue #28; docs/operations.md, "Object quotas"): how many
 * principals the deployment holds (RASK_QUOTA_PRINCIPALS) and how many unrevoked, unexpired API
 * keys one principal holds (its own `keys` limit, else RASK_QUOTA_KEYS_PER_PRINCIPAL). Everyone
 * may mint keys for themselves (policies/own-keys.cedar), so without the second a tenant could
 * fill the registry with keys. Both reserve a slot in a usage record by compare-and-swap before
 * the door writes (lib/catalog/quotas.ts, reserveSlots): concurrent creates never pass the quota,
 * a refusal writes nothing, and a revoked key's slot is found free by the next recount.
 */

/** The deployment's credential quotas; 0 = none. */
export interface CredentialQuotas {
  readonly principals: number;
  readonly keysPerPrincipal: number;
}
export const NO_CREDENTIAL_QUOTAS: CredentialQuotas = { principals: 0, keysPerPrincipal: 0 };

const credentialDefaults = (services: CatalogServices): CredentialQuotas => services.limits?.credentials ?? NO_CREDENTIAL_QUOTAS;

/** The keys quota of `principal`: its own, else the deployment's; 0 = none. */
export async function keysLimitOf(services: CatalogServices, principal: string): Promise<number> {
  const own = (await cachedPrincipal(services.registry, principal, services.now().getTime()))?.limits?.keys;
  return own ?? credentialDefaults(services).keysPerPrincipal;
}

export const principalsLimitOf = (services: CatalogServices): number => credentialDefaults(services).principals;

/** Reserves a key slot of `principal` for key `keyId`, or throws QuotaExceededError; undefined: no quota. */
export async function reserveKeySlot(services: CatalogServices, principal: string, keyId: string): Promise<QuotaHold | undefined> {
  const limit = await keysLimitOf(services, principal);
  if (limit <= 0) return undefined;
  return reserveSlots(services, keysCounter(services, principal), [govKeys.apiKey(keyId)], limit);
}

/** Reserves a principal slot for `name`, or throws QuotaExceededError; undefined: no quota. */
export async function reservePrincipalSlot(services: CatalogServices, name: string): Promise<QuotaHold | undefined> {
  const limit = principalsLimitOf(services);
  if (limit <= 0) return undefined;
  return reserveSlots(services, principalsCounter(services), [govKeys.principal(name)], limit);
}

/** After a principal's own keys quota changed (`limit` now in force; 0 = none). */
export async function recountKeys(services: CatalogServices, principal: string, limit: number): Promise<void> {
  await recountSlots(services, keysCounter(services, principal), limit, PRINCIPAL_CACHE_MS);
}

function keysCounter(services: CatalogServices, principal: string): SlotCounter {
  return {
    what: `an API key slot of principal ${JSON.stringify(principal)}`,
    usageKey: govKeys.keysQuota(principal),
    scan: (now) => scanKeys(services, principal, now),
    refusal: (limit, used) =>
      new QuotaExceededError(
        'keys',
        limit,
        used,
        `principal ${JSON.stringify(principal)} has reached its quota of ${limit} API keys (${used} unrevoked or being created), so no key was created; revoke some, or ask a platform administrator to raise the quota (POST /v1/principals/${principal}/limits {"keys": <n>})`,
      ),
  };
}

function principalsCounter(services: CatalogServices): SlotCounter {
  return {
    what: 'a principal slot of the deployment',
    usageKey: govKeys.principalsQuota(),
    scan: (now) => scanPrincipals(services, now),
    refusal: (limit, used) =>
      new QuotaExceededError(
        'principals',
        limit,
        used,
        `the deployment has reached its quota of ${limit} principals (${used} or being created), so this principal was not created; the operator raises it (RASK_QUOTA_PRINCIPALS)`,
      ),
  };
}

/**
 * The principal's keys that still count: every key record is read (keys carry their principal
 * inside, not in their name), which is why a recount happens only when the quota looks full and
 * at most once per interval. Revoked and expired keys count no more.
 */
async function scanKeys(services: CatalogServices, principal: string, now: number): Promise<Scan> {
  // Every key of the principal is found (its create has finished), revoked or not; only the live ones count.
  const found = new Set<string>();
  let live = 0;
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.listKeys({ prefix: govKeys.apiKeysPrefix(), startAfter });
    await forEachLimited(page.keys, 16, async (key) => {
      const rec = (await services.registry.read<ApiKeyRecord>(key))?.value;
      if (rec?.principal !== principal) return;
      found.add(key);
      if (rec.revokedAt || (rec.expiresAt !== undefined && !(Date.parse(rec.expiresAt) > now))) return;
      live++;
    });
    const last = page.keys[page.keys.length - 1];
    if (!page.truncated || last === undefined) break;
    startAfter = last;
  }
  return { startedAt: now, keys: found, count: live };
}

async function scanPrincipals(services: CatalogServices, now: number): Promise<Scan> {
  const found = new Set<string>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.listKeys({ prefix: govKeys.principalsPrefix(), startAfter });
    for (const key of page.keys) found.add(key);
    const last = page.keys[page.keys.length - 1];
    if (!page.truncated || last === undefined) break;
    startAfter = last;
  }
  return { startedAt: now, keys: found, count: found.size };
}
