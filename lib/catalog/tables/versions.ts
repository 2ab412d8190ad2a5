import { InvalidInputError, TableBranchNotFoundError, TableVersionNotFoundError } from '../../errors.js';
import type { CatalogServices } from '../services.js';
import { readBranch, validateBranch } from '../dataset/lance-refs.js';
import { resolveTable, type ResolvedTable } from '../protocols/lookup.js';
import { fmtId } from '../ids.js';
import { findManifest, versionsPrefix } from '../dataset/manifests.js';
import { markHasData } from '../protocols/markers.js';
import { latestEntry, readChain, tableVersionOf, type TableVersionJson } from '../dataset/version-chain.js';

/**
 * The read side of managed versioning: what Lance's namespace manifest store asks on every open
 * and every commit (`version/list?descending=true&limit=1`) and on checkout (`version/describe`).
 * Both read the dataset's `_versions/` directly, so they see a commit as soon as
 * CreateTableVersion has answered.
 */

export interface ListVersionsInput {
  readonly id: readonly string[];
  readonly branch?: string;
  readonly pageToken?: string;
  readonly limit?: number;
  readonly descending: boolean;
}

export async function listTableVersions(
  services: CatalogServices,
  input: ListVersionsInput,
): Promise<{ versions: TableVersionJson[]; page_token?: string }> {
  const table = await resolveTable(services, input.id);
  const branch = validateBranch(input.branch);
  const after = parseVersionToken(input.pageToken);
  if (input.limit === 0) return { versions: [] };
  const page = await readChain(table.store, versionsPrefix(table.record.path, branch), {
    descending: input.descending,
    after,
    limit: input.limit,
  });
  // Only an empty answer needs the branch check: a chain with manifests proves the branch exists.
  if (page.entries.length === 0 && branch && after === undefined) await requireBranch(table, branch);
  if (page.entries.length > 0) await noticeData(services, table);
  const versions = page.entries.map((e) => tableVersionOf(table.warehouse.storage, e.version, e.info));
  const last = versions[versions.length - 1];
  return page.more && last ? { versions, page_token: String(last.version) } : { versions };
}

export async function describeTableVersion(
  services: CatalogServices,
  input: { id: readonly string[]; version?: number; branch?: string },
): Promise<{ version: TableVersionJson }> {
  const table = await resolveTable(services, input.id);
  const branch = validateBranch(input.branch);
  const { storage } = table.warehouse;
  if (input.version === undefined) {
    // No version: the latest, like Lance's own "checkout latest".
    const latest = await latestEntry(table.store, versionsPrefix(table.record.path, branch));
    if (latest) {
      await noticeData(services, table);
      return { version: tableVersionOf(storage, latest.version, latest.info) };
    }
  } else {
    const info = await findManifest(table.store, table.record.path, input.version, branch);
    if (info) {
      await noticeData(services, table);
      return { version: tableVersionOf(storage, input.version, info) };
    }
  }
  if (branch) await requireBranch(table, branch);
  throw new TableVersionNotFoundError(
    input.version === undefined
      ? `table ${fmtId(input.id)} has no versions yet`
      : `table ${fmtId(input.id)} has no version ${input.version}${branch ? ` on branch ${branch}` : ''}`,
  );
}

/**
 * A managed table whose record says it has no data yet, seen with versions: a client committed
 * straight to storage instead of through CreateTableVersion. Its has-data marker is written now
 * (once: the record then says `data`), so include_declared=false lists it (markers.ts). Not in
 * read-only mode: the versions are answered all the same, and the next function that may write
 * (this lookup outside read-only mode, or the reconcile pass's repair) records the data.
 */
async function noticeData(services: CatalogServices, table: ResolvedTable): Promise<void> {
  if (table.record.dataMarker !== 'none' || services.readOnly) return;
  await markHasData(services, table.record.id, table.record, table.etag);
}

async function requireBranch(table: ResolvedTable, branch: string): Promise<void> {
  if (!(await readBranch(table.store, table.record.path, branch))) {
    throw new TableBranchNotFoundError(`table ${fmtId(table.record.id)} has no branch ${JSON.stringify(branch)}`);
  }
}

/** Page tokens are version numbers (exclusive), so a token never goes stale when versions are added. */
function parseVersionToken(token: string | undefined): number | undefined {
  if (token === undefined || token === '') return undefined;
  if (!/^\d+$/.test(token) || !Number.isSafeInteger(Number(token))) {
    throw new InvalidInputError(`page_token ${JSON.stringify(token)} is not a version token from a previous page`);
  }
  return Number(token);
}
