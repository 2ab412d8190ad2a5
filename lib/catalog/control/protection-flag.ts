import type { CatalogServices } from '../services.js';
import { InvalidTableStateError } from '../../errors.js';
import type { Caller } from '../../contract/request.js';
import { q } from './errors.js';

/**
 * Protection on the two control-plane rungs (docs/lifecycle.md): a `protection` stamp on the
 * project or warehouse record, set and cleared with `{"protected": true|false}` on its create or
 * update door (admin-gated like every change to those records), shown as `protected` by their
 * describe answers, and checked by their delete doors. Force overrides it and nothing else: the
 * guard has authorized the delete before the handler runs.
 */

type Stamp = { readonly setAt: string; readonly setBy: string };

/**
 * The record's next protection for a request's `protected` field: unchanged when the request
 * does not say, removed for `false`, kept (first setter) or stamped for `true`.
 */
export function nextProtection(
  services: CatalogServices,
  caller: Caller | undefined,
  wanted: boolean | undefined,
  current: Stamp | undefined,
): { protection?: Stamp } | 'unchanged' {
  if (wanted === undefined) return 'unchanged';
  if (!wanted) return {};
  return { protection: current ?? { setAt: services.now().toISOString(), setBy: caller?.principal ?? 'anonymous' } };
}

/** Applies nextProtection to a record (dropping the field when it is cleared). */
export function withProtection<R extends { protection?: Stamp }>(record: R, next: ReturnType<typeof nextProtection>): R {
  if (next === 'unchanged') return record;
  const { protection: _old, ...rest } = record;
  return (next.protection ? { ...rest, protection: next.protection } : rest) as R;
}

/** Refuses (409 / 19, naming the object and the way out) unless forced. */
export function refuseProtectedDelete(what: 'project' | 'warehouse', name: string, record: { protection?: Stamp }, force: boolean, updateDoor: string): void {
  if (force || !record.protection) return;
  throw new InvalidTableStateError(
    `${what} ${q(name)} is protected and cannot be deleted; only a project administrator may unprotect it (POST ${updateDoor} {"protected": false}) or override the protection with force=true`,
  );
}
