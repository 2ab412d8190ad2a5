import { govKeys } from '../../registry/principal-keys.js';
import type { PrincipalLimits, PrincipalRecord } from '../../registry/principal-records.js';
import { slotsInUse } from '../quotas.js';
import type { CatalogServices } from '../services.js';
import { CREATE_HINT, notFound, q } from './errors.js';
import { forgetPrincipal } from './principal-cache.js';
import { NO_CREDENTIAL_QUOTAS, recountKeys } from './principal-quotas.js';

/**
 * A principal's own limits (GetPrincipalLimits / SetPrincipalLimits,
 * `GET|POST /v1/principals/{principal}/limits`; docs/operations.md, "Per-principal limits"): its
 * request rate and its API-key quota. A principal reads its own (policies/own-limits.cedar); only a
 * platform administrator sets them (`limits:manage`), and each change is a
 * `dev.rask.principal.limits_set` event naming who made it. They live on the principal record;
 * other processes apply a change within the principal cache's 30 s.
 *
 * A principal's rate is its own bucket: the buckets of the projects it calls still apply, so
 * raising a principal's rate never lets it past a project's (lib/http/rate-limit.ts).
 */

/** What SetPrincipalLimits takes: a number sets the principal's own, null goes back to the default, absent leaves it. */
export interface PrincipalLimitsInput {
  readonly keys?: number | null;
  readonly rate?: { readonly perSecond: number; readonly burst?: number } | null;
}

export interface PrincipalLimitsView {
  readonly principal: string;
  /** Unrevoked API keys: the quota in force (null: none), whose it is, and how many are counted (null while none are). */
  readonly keys: { readonly limit: number | null; readonly source: 'principal' | 'default'; readonly in_use: number | null };
  readonly rate: { readonly per_second: number | null; readonly burst: number | null; readonly source: 'principal' | 'default' };
}

async function requirePrincipal(services: CatalogServices, name: string) {
  const found = name.length > 0 && name.length <= 128 ? await services.registry.read<PrincipalRecord>(govKeys.principal(name)) : undefined;
  if (!found) throw notFound(`principal ${q(name)}`, CREATE_HINT.principal);
  return found;
}

async function view(services: CatalogServices, name: string, own: PrincipalLimits | undefined): Promise<PrincipalLimitsView> {
  const keysLimit = own?.keys ?? (services.limits?.credentials ?? NO_CREDENTIAL_QUOTAS).keysPerPrincipal;
  const rate = own?.rate ?? services.limits?.principalRate ?? { perSecond: 0, burst: 1 };
  return {
    principal: name,
    keys: {
      limit: keysLimit > 0 ? keysLimit : null,
      source: own?.keys !== undefined ? 'principal' : 'default',
      in_use: await slotsInUse(services, govKeys.keysQuota(name), keysLimit),
    },
    rate: { per_second: rate.perSecond > 0 ? rate.perSecond : null, burst: rate.perSecond > 0 ? rate.burst : null, source: own?.rate ? 'principal' : 'default' },
  };
}

export async function getPrincipalLimits(services: CatalogServices, name: string): Promise<PrincipalLimitsView> {
  const found = await requirePrincipal(services, name);
  return view(services, name, found.value.limits);
}

export async function setPrincipalLimits(services: CatalogServices, name: string, input: PrincipalLimitsInput): Promise<PrincipalLimitsView> {
  const next = await services.registry.retrying(`set the limits of principal ${q(name)}`, async () => {
    const found = await requirePrincipal(services, name);
    const limits: { keys?: number; rate?: { perSecond: number; burst: number } } = { ...found.value.limits };
    if (input.keys === null) delete limits.keys;
    else if (input.keys !== undefined) limits.keys = input.keys;
    if (input.rate === null) delete limits.rate;
    else if (input.rate !== undefined) limits.rate = { perSecond: input.rate.perSecond, burst: input.rate.burst ?? Math.max(1, 2 * input.rate.perSecond) };
    const { limits: _old, ...rest } = found.value;
    const record: PrincipalRecord = Object.keys(limits).length > 0 ? { ...rest, limits } : rest;
    await services.registry.replace(govKeys.principal(name), record, found.etag);
    forgetPrincipal(services.registry, name);
    return record.limits;
  });
  // The keys quota now in force starts from what exists (lib/catalog/quotas.ts, `recountSlots`).
  await recountKeys(services, name, next?.keys ?? (services.limits?.credentials ?? NO_CREDENTIAL_QUOTAS).keysPerPrincipal);
  return view(services, name, next);
}
