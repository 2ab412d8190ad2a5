import { InvalidInputError, InvalidTableStateError } from '../../errors.js';
import type { CatalogServices } from '../services.js';
import { isMain, listTags, validateBranch } from '../dataset/lance-refs.js';
import { resolveTable } from '../protocols/lookup.js';
import { fmtId } from '../ids.js';
import { versionsPrefix } from '../dataset/manifests.js';
import { readChain } from '../dataset/version-chain.js';

export interface VersionRange {
  /** Inclusive. */
  readonly start: number;
  /** Exclusive; -1 = through the latest version. */
  readonly end: number;
}

/**
 * BatchDeleteTableVersions: removes manifests in `[start, end)` ranges. Two versions are never
 * deleted, and a request naming either is refused whole (nothing is deleted):
 *
 * - the latest version: without it the chain's head moves backwards, and the next commit's
 *   strict CAS (latest + 1) would reuse a version number readers have already seen;
 * - a tagged version: a tag is a promise that the version stays readable (docs/rules.md rule 12).
 *
 * Tags are created by clients directly in `_refs/tags/` without asking the catalog, so a tag
 * written between our check and our delete is not seen; maintenance must keep its own cutoff
 * below tagged versions for the same reason (docs/managed-versioning.md).
 */
export async function deleteTableVersions(
  services: CatalogServices,
  input: { id: readonly string[]; branch?: string; ranges: readonly VersionRange[] },
): Promise<{ deleted_count: number }> {
  const table = await resolveTable(services, input.id);
  const branch = validateBranch(input.branch);
  const chain = (await readChain(table.store, versionsPrefix(table.record.path, branch), { descending: true })).entries;
  if (chain.length === 0) return { deleted_count: 0 };
  const latest = chain[0].version;
  const inRange = (v: number) => input.ranges.some((r) => v >= r.start && (r.end === -1 || v < r.end));
  const doomed = chain.filter((e) => inRange(e.version));
  if (doomed.length === 0) return { deleted_count: 0 };

  if (doomed[0].version === latest) {
    throw new InvalidTableStateError(
      `refusing to delete version ${latest} of table ${fmtId(input.id)}: it is the latest version; ` +
        `only older versions can be deleted (end the range before ${latest})`,
    );
  }
  const tagged = (await listTags(table.store, table.record.path)).filter(
    (t) => (isMain(t.branch) ? !branch : t.branch === branch) && doomed.some((e) => e.version === t.version),
  );
  if (tagged.length > 0) {
    const names = tagged.map((t) => `${JSON.stringify(t.name)} → ${t.version}`).join(', ');
    throw new InvalidTableStateError(
      `refusing to delete tagged versions of table ${fmtId(input.id)} (${names}); delete or move the tags first`,
    );
  }
  for (const entry of doomed) await table.store.delete(entry.info.key);
  return { deleted_count: doomed.length };
}

/** Spec VersionRange objects, checked field by field. */
export function parseRanges(value: unknown): VersionRange[] {
  if (!Array.isArray(value)) throw new InvalidInputError('ranges must be an array of {start_version, end_version}');
  return value.map((r, i) => {
    const where = `ranges[${i}]`;
    if (typeof r !== 'object' || r === null) throw new InvalidInputError(`${where} must be an object`);
    const { start_version: start, end_version: end } = r as Record<string, unknown>;
    if (typeof start !== 'number' || !Number.isSafeInteger(start) || start < 0) {
      throw new InvalidInputError(`${where}.start_version must be a non-negative integer`);
    }
    if (typeof end !== 'number' || !Number.isSafeInteger(end) || (end !== -1 && end < start)) {
      throw new InvalidInputError(`${where}.end_version must be -1 (through the latest) or an integer ≥ start_version`);
    }
    return { start, end };
  });
}
