/** Read-only views of a table: DescribeTable (data part), GetTableStats, the dataset's own version list. */
import { toJsonArrowSchema } from '../../data/arrow.js';
import type { Table } from './lancedb.js';
import type { TableLocation } from '../../data/location.js';
import type { TableDescription, TableStats, TableVersion, VersionListing } from '../../ports/data-engine.js';
export type { TableDescription, TableStats, TableVersion };

export async function describe(table: Table): Promise<TableDescription> {
  const [version, schema] = await Promise.all([table.version(), table.schema()]);
  const json = toJsonArrowSchema(schema);
  return json.metadata ? { version, schema: json, metadata: json.metadata } : { version, schema: json };
}

export async function stats(table: Table): Promise<TableStats> {
  const s = await table.stats();
  const l = s.fragmentStats.lengths;
  // The spec types every figure as int64; LanceDB's mean can be fractional.
  const int = Math.round;
  return {
    total_bytes: s.totalBytes,
    num_rows: s.numRows,
    num_indices: s.numIndices,
    fragment_stats: {
      num_fragments: s.fragmentStats.numFragments,
      num_small_fragments: s.fragmentStats.numSmallFragments,
      lengths: { min: int(l.min), max: int(l.max), mean: int(l.mean), p25: int(l.p25), p50: int(l.p50), p75: int(l.p75), p99: int(l.p99) },
    },
  };
}

/**
 * The versions the dataset itself holds (not the catalog's records). `manifest_path` is given
 * relative to the object-store root (no scheme, bucket or leading slash), the form the Lance
 * REST client uses in CreateTableVersion. Paging is by version number.
 */
export async function listVersions(
  table: Table,
  location: TableLocation,
  listing: VersionListing,
): Promise<{ versions: TableVersion[]; page_token?: string }> {
  const { descending, limit, after } = listing;
  const branch = listing.branch === 'main' ? undefined : listing.branch;
  const v2 = 'usesV2ManifestPaths' in table ? await (table as { usesV2ManifestPaths(): Promise<boolean> }).usesV2ManifestPaths() : true;
  const dir = `${storePath(location.uri)}${branch ? `/tree/${branch}` : ''}/_versions`;

  let all = (await table.listVersions()).sort((a, b) => (descending ? b.version - a.version : a.version - b.version));
  if (after !== undefined) all = all.filter((v) => (descending ? v.version < after : v.version > after));
  const items = limit === undefined ? all : all.slice(0, limit);
  const versions = items.map((v) => ({
    version: v.version,
    manifest_path: `${dir}/${manifestName(v.version, v2)}`,
    timestamp_millis: new Date(v.timestamp).getTime(),
    metadata: { ...v.metadata },
  }));
  const more = items.length < all.length && items.length > 0;
  return more ? { versions, page_token: String(items[items.length - 1].version) } : { versions };
}

/** V2 names sort newest-first: the file is named u64::MAX - version, zero-padded to 20 digits. */
export function manifestName(version: number, v2: boolean): string {
  if (!v2) return `${version}.manifest`;
  return `${(2n ** 64n - 1n - BigInt(version)).toString().padStart(20, '0')}.manifest`;
}

function storePath(uri: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]*\/?(.*)$/i.exec(uri);
  return (m ? m[1] : uri).replace(/^\/+/, '');
}
