/**
 * Quotas on credentials (lib/catalog/control/principal-quotas.ts; docs/operations.md, "Object
 * quotas"): API keys per principal and principals per deployment reserve a slot by
 * compare-and-swap before the door writes, like the project quotas, so concurrent creates at the
 * edge admit exactly the quota — on random interleavings of the memory store and on the
 * filesystem store's real concurrency — a refusal writes nothing, and a revoked key frees its
 * slot at the next recount.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { QuotaExceededError } from '../../lib/errors.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { createApiKey, createPrincipal, listApiKeys, listPrincipals, revokeApiKey } from '../../lib/catalog/control/principals.js';
import { getPrincipalLimits, setPrincipalLimits } from '../../lib/catalog/control/principal-limits.js';
import { RECOUNT_INTERVAL_MS } from '../../lib/catalog/quotas.js';
import { servicesOver } from '../support/services.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

/** Services with credential quotas and a clock the test moves. */
async function fixture(kind: 'memory' | 'fs', credentials: { principals: number; keysPerPrincipal: number }, jitterTurns?: number) {
  const f = await servicesOver(kind, jitterTurns ? { jitterTurns } : {});
  cleanups.push(() => f.cleanup());
  let t = Date.parse('2026-12-03T08:00:00Z');
  const limits = { quotas: { namespaces: 0, tables: 0 }, projectRate: { perSecond: 0, burst: 1 }, credentials };
  const services = { ...f.services, limits, now: () => new Date(t) } as CatalogServices;
  const direct = { ...f.direct, limits, now: () => new Date(t) } as CatalogServices;
  return { services, direct, advance: (ms: number) => (t += ms) };
}

const outcome = async (p: Promise<unknown>): Promise<'created' | 'quota'> => {
  try {
    await p;
    return 'created';
  } catch (err) {
    if (err instanceof QuotaExceededError) return 'quota';
    throw err;
  }
};

describe('credential quotas', () => {
  it('16 concurrent key mints against a quota of 10 admit exactly 10, on random interleavings (memory store)', async () => {
    for (let round = 0; round < 10; round++) {
      const limit = 1 + (round % 10);
      const { services, direct } = await fixture('memory', { principals: 0, keysPerPrincipal: limit }, 4);
      await createPrincipal(direct, { name: 'tenant' });
      const outcomes = await Promise.all(Array.from({ length: 16 }, () => outcome(createApiKey(services, 'tenant'))));
      expect(outcomes.filter((o) => o === 'created').length, `round ${round}: ${outcomes}`).toBe(limit);
      expect((await listApiKeys(direct, 'tenant')).keys.length).toBe(limit);
    }
  });

  it('16 concurrent key mints against a quota of 10 admit exactly 10 on the filesystem store (real concurrency)', async () => {
    const { services, direct } = await fixture('fs', { principals: 0, keysPerPrincipal: 10 });
    await createPrincipal(direct, { name: 'tenant' });
    const outcomes = await Promise.all(Array.from({ length: 16 }, () => outcome(createApiKey(services, 'tenant'))));
    expect(outcomes.filter((o) => o === 'created').length, String(outcomes)).toBe(10);
    expect((await listApiKeys(direct, 'tenant')).keys.length).toBe(10);
    expect((await getPrincipalLimits(direct, 'tenant')).keys).toEqual({ limit: 10, source: 'default', in_use: 10 });
  });

  it('16 concurrent principal creates against a quota of 10 admit exactly 10 (filesystem store)', async () => {
    const { services, direct } = await fixture('fs', { principals: 10, keysPerPrincipal: 0 });
    const outcomes = await Promise.all(Array.from({ length: 16 }, (_, i) => outcome(createPrincipal(services, { name: `p${i}` }))));
    expect(outcomes.filter((o) => o === 'created').length, String(outcomes)).toBe(10);
    expect((await listPrincipals(direct, {})).principals.length).toBe(10);
  });

  it('a refusal names the quota and writes nothing; a revoked key frees its slot at the next recount', async () => {
    const { services, direct, advance } = await fixture('memory', { principals: 0, keysPerPrincipal: 2 });
    await createPrincipal(direct, { name: 'tenant' });
    const first = await createApiKey(services, 'tenant');
    await createApiKey(services, 'tenant');
    const refused = await createApiKey(services, 'tenant').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QuotaExceededError);
    expect((refused as Error).message).toMatch(/principal "tenant" has reached its quota of 2 API keys .*POST \/v1\/principals\/tenant\/limits/);
    expect((await listApiKeys(direct, 'tenant')).keys.length).toBe(2);
    await revokeApiKey(services, 'tenant', first.key_id);
    advance(RECOUNT_INTERVAL_MS);
    await createApiKey(services, 'tenant');
    expect((await listApiKeys(direct, 'tenant')).keys.filter((k) => k.revoked_at === null).length).toBe(2);
  });

  it("a principal's own keys quota replaces the default and counts what exists; null goes back to it", async () => {
    const { services, direct } = await fixture('memory', { principals: 0, keysPerPrincipal: 1 });
    await createPrincipal(direct, { name: 'tenant' });
    await createApiKey(services, 'tenant');
    expect(await outcome(createApiKey(services, 'tenant'))).toBe('quota');
    expect((await setPrincipalLimits(services, 'tenant', { keys: 3 })).keys).toEqual({ limit: 3, source: 'principal', in_use: 1 });
    await createApiKey(services, 'tenant');
    await createApiKey(services, 'tenant');
    expect(await outcome(createApiKey(services, 'tenant'))).toBe('quota');
    expect((await setPrincipalLimits(services, 'tenant', { keys: null })).keys).toEqual({ limit: 1, source: 'default', in_use: 3 });
    expect(await outcome(createApiKey(services, 'tenant'))).toBe('quota');
  });
});
