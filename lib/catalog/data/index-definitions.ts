/**
 * Index definitions in the catalog (issue #33 item 3; docs/index-builds.md, "Index definitions").
 *
 * LanceDB forgets an index a write dropped: a rewrite of the fragments an index's column lives
 * in removes the index from the manifest (docs/data-plane.md, "Column-only fills"), and nothing
 * of its name, column or parameters is left to rebuild it from. So the catalog keeps each
 * index's definition in the table's record (`indexDefinitions`), where it travels with the
 * record through rename and trash and dies with it:
 *
 * - CreateTableIndex / CreateTableScalarIndex record it once the build committed (in the request
 *   or in its `create_index` job); an index already built when the record write fails is found
 *   by the next index-builder pass, which records what it sees (`discovered`);
 * - the index builder records every index it finds without a definition (a client that built it
 *   straight to storage), and rebuilds from its definition an index a write dropped;
 * - DropTableIndex writes the name into `droppedIndices` BEFORE it drops the index, so a pass
 *   that saw the index a moment earlier never records it again; the builder clears the name
 *   once the index is gone. A dropped index stays dropped;
 * - AlterTableAlterColumns renames the column of the definitions on a renamed column;
 *   AlterTableDropColumns removes the definitions on a dropped column (LanceDB drops those
 *   indices with the column).
 *
 * Every change is one compare-and-swap on the table record (docs/protocols.md, "Lost races
 * retry"), re-read on each attempt, so concurrent writers of definitions (two builds, a build
 * and a drop, a door and an index-builder pass) all land. A record whose uid is not the one the
 * change was meant for (the table was dropped and re-created) is left alone.
 */
import { type IndexRequest, indexRequestFields, INDEX_KINDS, readIndexRequest } from '../../data/index-request.js';
import type { DroppedIndex, IndexDefinition, TableRecord } from '../../registry/records.js';
import type { CatalogServices } from '../services.js';
import { readTable, tableKey } from '../protocols/lookup.js';
import { fmtId } from '../ids.js';

/** Records stay small (every read of the table pays for them): definitions and dropped names kept. */
export const MAX_INDEX_DEFINITIONS = 64;
export const MAX_DROPPED_INDICES = 64;

/** The table a change is for: its id now and the uid it must still have. */
export interface DefinedTable {
  readonly id: readonly string[];
  readonly uid: string;
}

interface Definitions {
  readonly defined: readonly IndexDefinition[];
  readonly dropped: readonly DroppedIndex[];
}

/** The definitions on a record (none on records written before they existed). */
export function definitionsOf(record: TableRecord): Definitions {
  return { defined: record.indexDefinitions ?? [], dropped: record.droppedIndices ?? [] };
}

/** The name LanceDB gives an unnamed index. */
export function indexNameOf(request: IndexRequest): string {
  return request.name ?? `${request.column}_idx`;
}

/** A request as the definition it records (parameters as the request's snake_case fields). */
export function definitionOf(request: IndexRequest, source: IndexDefinition['source'], now: Date): IndexDefinition {
  const { column: _c, index_type: _t, name: _n, branch: _b, ...params } = indexRequestFields(request);
  return {
    name: indexNameOf(request),
    column: request.column,
    type: request.indexType,
    ...(Object.keys(params).length > 0 ? { params } : {}),
    source,
    recordedAt: now.toISOString(),
  };
}

/** A definition as the request that rebuilds it, decoded as a CreateTableIndex body is. */
export function requestOf(definition: IndexDefinition): IndexRequest {
  return readIndexRequest({ ...(definition.params ?? {}), column: definition.column, index_type: definition.type, name: definition.name });
}

/** Whether the catalog can build an index LanceDB reports as `type` (IVF_SQ, IVF_HNSW_FLAT: no). */
export function buildableType(type: string | undefined): type is keyof typeof INDEX_KINDS {
  return type !== undefined && type in INDEX_KINDS;
}

/**
 * One compare-and-swap of the table's definitions: `change` gets the current ones and answers
 * the next, or undefined for nothing to write. Answers what is on record afterwards (undefined
 * when the table is gone or is another table now).
 */
export async function changeDefinitions(
  services: CatalogServices,
  table: DefinedTable,
  change: (current: Definitions) => Definitions | undefined,
): Promise<Definitions | undefined> {
  return services.registry.retrying(`record index definitions of table ${fmtId(table.id)}`, async () => {
    const found = await readTable(services, table.id);
    if (!found || found.value.uid !== table.uid) return undefined;
    const current = definitionsOf(found.value);
    const next = change(current);
    if (!next) return current;
    const bounded: Definitions = { defined: next.defined.slice(0, MAX_INDEX_DEFINITIONS), dropped: next.dropped.slice(-MAX_DROPPED_INDICES) };
    const record: TableRecord = { ...found.value, indexDefinitions: bounded.defined, droppedIndices: bounded.dropped };
    await services.registry.replace(tableKey(services, table.id), record, found.etag);
    return bounded;
  });
}

/** After a build through the catalog: its definition, replacing any of that name (a drop of it included). */
export function recordDefinition(services: CatalogServices, table: DefinedTable, request: IndexRequest): Promise<unknown> {
  // Branch indices are the branch's business: definitions are kept for main only.
  if (request.branch !== undefined) return Promise.resolve();
  const definition = definitionOf(request, 'catalog', services.now());
  return changeDefinitions(services, table, ({ defined, dropped }) => ({
    defined: [...defined.filter((d) => d.name !== definition.name), definition],
    dropped: dropped.filter((d) => d.name !== definition.name),
  }));
}

/** Before DropTableIndex drops `name` on main: its definition removed and the drop noted. */
export function recordDrop(services: CatalogServices, table: DefinedTable, name: string): Promise<unknown> {
  const droppedAt = services.now().toISOString();
  return changeDefinitions(services, table, ({ defined, dropped }) => ({
    defined: defined.filter((d) => d.name !== name),
    dropped: [...dropped.filter((d) => d.name !== name), { name, droppedAt }],
  }));
}

/** The index builder found `name` dropped straight to storage: its definition goes (it stays dropped). */
export function forgetDefinition(services: CatalogServices, table: DefinedTable, name: string): Promise<unknown> {
  return changeDefinitions(services, table, ({ defined, dropped }) =>
    defined.some((d) => d.name === name) ? { defined: defined.filter((d) => d.name !== name), dropped } : undefined,
  );
}

/** After AlterTableAlterColumns on main: definitions follow a renamed column. */
export function renameColumns(services: CatalogServices, table: DefinedTable, renames: ReadonlyMap<string, string>): Promise<unknown> {
  if (renames.size === 0) return Promise.resolve();
  return changeDefinitions(services, table, ({ defined, dropped }) =>
    defined.some((d) => renames.has(d.column)) ? { defined: defined.map((d) => (renames.has(d.column) ? { ...d, column: renames.get(d.column)! } : d)), dropped } : undefined,
  );
}

/** After AlterTableDropColumns on main: LanceDB dropped the indices on those columns, and so does the catalog. */
export function dropColumnDefinitions(services: CatalogServices, table: DefinedTable, columns: readonly string[]): Promise<unknown> {
  const gone = new Set(columns);
  return changeDefinitions(services, table, ({ defined, dropped }) =>
    defined.some((d) => gone.has(d.column)) ? { defined: defined.filter((d) => !gone.has(d.column)), dropped } : undefined,
  );
}

/** An index the index builder sees on main. */
export interface SeenIndex {
  readonly name: string;
  readonly columns: readonly string[];
  readonly type?: string;
  /** Vector indices: the distance type their statistics report (a rebuild must keep it). */
  readonly distanceType?: string;
}

/**
 * The index builder's reconciliation of what it sees with what is on record: every index with
 * one column of a type the catalog can build and neither a definition nor a noted drop is
 * recorded (`discovered`, with the parameters that can be read back: the distance type);
 * a noted drop whose index is gone is cleared. Answers the definitions on record afterwards and
 * the names it discovered.
 */
export async function reconcileDefinitions(
  services: CatalogServices,
  table: DefinedTable,
  seen: readonly SeenIndex[],
): Promise<{ defined: readonly IndexDefinition[]; discovered: readonly string[] }> {
  const recordedAt = services.now().toISOString();
  const present = new Set(seen.map((s) => s.name));
  let discovered: string[] = [];
  const after = await changeDefinitions(services, table, ({ defined, dropped }) => {
    const known = new Set([...defined.map((d) => d.name), ...dropped.map((d) => d.name)]);
    const fresh = seen.filter((s) => !known.has(s.name) && s.columns.length === 1 && buildableType(s.type));
    const keptDrops = dropped.filter((d) => present.has(d.name));
    discovered = fresh.map((s) => s.name);
    if (fresh.length === 0 && keptDrops.length === dropped.length) return undefined;
    const added = fresh.map(
      (s): IndexDefinition => ({
        name: s.name,
        column: s.columns[0],
        type: s.type!,
        ...(s.distanceType ? { params: { distance_type: s.distanceType } } : {}),
        source: 'discovered',
        recordedAt,
      }),
    );
    return { defined: [...defined, ...added], dropped: keptDrops };
  });
  return { defined: after?.defined ?? [], discovered: after ? discovered : [] };
}
