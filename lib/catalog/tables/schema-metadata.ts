/**
 * Table schema metadata (UpdateTableSchemaMetadata, and `metadata` in a detailed DescribeTable).
 *
 * Where it lives: in the table's registry record, field `schemaMetadata`, as an overlay on the
 * dataset's own Arrow schema metadata. LanceDB 0.31.0 has no schema-metadata call; its only
 * routes are addColumns with an empty schema (adds keys, cannot change or delete one) or an
 * overwrite of the whole table (rewrites every row). Keeping the map in the catalog costs one
 * conditional write of a small JSON object and never touches the data or its version history.
 *
 * Semantics (docs/rules.md rule 10): an update MERGES into the current map; a `null` value
 * deletes the key (recorded as a `null` in the overlay, so a key that came from the dataset
 * stays deleted); `description` is reserved for the table's human description, so it is kept
 * to human-sized text. The answer is the full effective map after the update.
 *
 * Trade-off: readers that open the dataset directly (not through DescribeTable) see only the
 * dataset's own metadata, not the overlay.
 */
import { InvalidInputError } from '../../errors.js';
import type { TableRecord } from '../../registry/records.js';
import type { CatalogServices } from '../services.js';
import { hasData, resolveTable, tableKey } from '../protocols/lookup.js';
import { fmtId } from '../ids.js';

export type MetadataUpdate = Record<string, string | null>;

/** The key reserved for the table's human description (what catalogs and UIs show). */
export const DESCRIPTION_KEY = 'description';
/** A description is prose for people, not a place to park data. */
export const MAX_DESCRIPTION_CHARS = 4096;

/** Registry records stay small: every read of the table pays for this map. */
export const MAX_METADATA_KEYS = 256;
export const MAX_METADATA_BYTES = 64 * 1024;

/** The overlay after applying `update`; refuses a map that would outgrow the record. */
export function mergeOverlay(current: Readonly<Record<string, string | null>>, update: MetadataUpdate): Record<string, string | null> {
  const next: Record<string, string | null> = { ...current, ...update };
  const live = Object.values(next).filter((v) => v !== null).length;
  if (live > MAX_METADATA_KEYS) {
    throw new InvalidInputError(`a table holds at most ${MAX_METADATA_KEYS} schema metadata keys`);
  }
  if (Buffer.byteLength(JSON.stringify(next)) > MAX_METADATA_BYTES) {
    throw new InvalidInputError(`schema metadata is limited to ${MAX_METADATA_BYTES} bytes of JSON`);
  }
  return next;
}

/** What clients see: the dataset's own metadata with the catalog's overlay applied. */
export function effectiveMetadata(
  dataset: Readonly<Record<string, string>> | undefined,
  overlay: Readonly<Record<string, string | null>> | undefined,
): Record<string, string> {
  const out: Record<string, string> = { ...(dataset ?? {}) };
  for (const [key, value] of Object.entries(overlay ?? {})) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** Reads the dataset's own schema metadata (the data plane opens the dataset). */
export type DatasetMetadataReader = (location: string) => Promise<Record<string, string> | undefined>;

/**
 * Merges `update` into the table's overlay with a compare-and-swap on its record (a concurrent
 * update re-reads and merges again, so neither loses keys), then answers the effective map.
 */
export async function updateSchemaMetadata(
  services: CatalogServices,
  id: readonly string[],
  update: MetadataUpdate,
  readDataset: DatasetMetadataReader,
): Promise<Record<string, string>> {
  const saved = await services.registry.retrying(`update schema metadata of table ${fmtId(id)}`, async () => {
    const table = await resolveTable(services, id);
    const overlay = mergeOverlay(table.record.schemaMetadata ?? {}, update);
    const next: TableRecord = { ...table.record, schemaMetadata: overlay };
    await services.registry.replace(tableKey(services, id), next, table.etag);
    return { table, overlay };
  });
  const { table, overlay } = saved;
  // A declared table has no dataset yet, so no metadata of its own.
  const own = (await hasData(table.store, table.record.path)) ? await readDataset(table.location) : undefined;
  return effectiveMetadata(own, overlay);
}
