/**
 * The data plane: spec data operations on a Lance table identified by its storage location.
 *
 * Requests are the spec's decoded JSON bodies (snake_case); responses are the spec's response
 * objects; failures are CatalogErrors. Connections are cached per (parent, storage options) for
 * the life of the process. Calls on the latest version of the main branch that never move their
 * handle (queries, counts, describes, inserts, merges, updates, deletes) share one kept handle per
 * table (table-handles.ts), brought to the latest version once at the start of each call; every
 * other call opens its own and closes it. Either way a call sees the storage as it was when the
 * call started, and its own writes.
 */
import { readFile } from 'node:fs/promises';
import { CatalogError, InvalidInputError } from '../../errors.js';
import { decodeIpc, encodeIpcFile } from '../../data/arrow.js';
import { connectCached } from './connections.js';
import { describe, listVersions, stats, type TableDescription, type TableStats, type TableVersion } from './describe.js';
import { mapLanceError, type MapContext } from './errors.js';
import * as columnBackfill from './column-backfill.js';
import * as computed from './computed.js';
import { checkIndex, createIndex, dropIndex, type IndexContent, indexStats, type IndexStats, listIndices } from './indexes.js';
import { type Connection, type LanceDb, loadLanceDb, type Table } from './lancedb.js';
import { localPathInside, parseLocation, type TableLocation } from '../../data/location.js';
import { buildQuery, resultTooLarge, runQuery } from './query.js';
import { forgetHandle, latestHandle } from './table-handles.js';
import * as refs from './refs.js';
import { optRefName } from '../../data/names.js';
import * as schema from './schema.js';
import { optSql } from '../../data/sql-bounds.js';
import { asObject, type Json, optBool, optEnum, optInt, reqInt, reqString } from '../../data/validate.js';
import * as writes from './writes.js';
import type { BackfillSlice, BackfillSliceRequest, CreateMode, DataEngine, Empty, ReadSelection } from '../../ports/data-engine.js';

export type { CreateMode, ReadSelection };

export interface LanceDataEngineOptions {
  /** Passed to `lancedb.connect` (credentials, endpoint, region…). Never logged. */
  readonly storageOptions?: Record<string, string>;
  /**
   * Reads a small file inside a table directory (branch ref files carry `createAt` and
   * `metadata`, which LanceDB 0.31.0 does not report). Default: local tables only.
   */
  readonly readTableFile?: (tableUri: string, relativePath: string) => Promise<string | undefined>;
}

// Request bodies are typed `object` (not Record<string, unknown>) so that callers can pass their
// own request interfaces; every field is validated here anyway.

/** The DataEngine port over LanceDB. */
export class LanceDataEngine implements DataEngine {
  private readonly storageOptions: Record<string, string>;

  constructor(private readonly options: LanceDataEngineOptions = {}) {
    this.storageOptions = { ...(options.storageOptions ?? {}) };
  }

  // ---- table lifecycle and writes ----

  async createTable(location: string, ipcBody: Buffer, mode: CreateMode | string = 'create'): Promise<{ version: number }> {
    const m = optEnum(mode, 'mode', ['create', 'exist_ok', 'overwrite'] as const) ?? 'create';
    const data = decodeIpc(ipcBody);
    const loc = parseLocation(location);
    try {
      const db = await this.connect(loc.parent);
      const table = await db.createTable(loc.name, data, {
        mode: m === 'overwrite' ? 'overwrite' : 'create',
        existOk: m === 'exist_ok',
      });
      try {
        return { version: await table.version() };
      } finally {
        table.close();
      }
    } catch (err) {
      throw mapLanceError(err);
    }
  }

  async insert(
    location: string,
    ipcBody: Buffer,
    mode: writes.InsertMode | string = 'append',
    options: { branch?: string } = {},
  ): Promise<{ version: number; num_inserted_rows: number }> {
    const m = writes.readInsertMode(mode);
    const data = decodeIpc(ipcBody);
    return this.use(location, writeTarget(options), (t) => writes.insert(t, data, m), SHARED);
  }

  async mergeInsert(location: string, ipcBody: Buffer, request: object): Promise<writes.MergeInsertResponse> {
    const data = decodeIpc(ipcBody);
    return this.use(location, writeTarget(request), (t) => writes.mergeInsert(t, data, request), SHARED);
  }

  async update(location: string, request: object): Promise<{ updated_rows: number; version: number }> {
    return this.use(location, writeTarget(request), (t) => writes.update(t, request), SHARED);
  }

  async delete(location: string, request: object): Promise<{ version: number }> {
    return this.use(location, writeTarget(request), (t) => writes.deleteRows(t, request), SHARED);
  }

  async restore(location: string, request: object | number): Promise<{ version: number }> {
    const body = typeof request === 'number' ? { version: request } : asObject(request);
    const version = reqInt(body.version, 'version');
    return this.use(location, { ...writeTarget(body), version }, async (t) => {
      await t.restore();
      return { version: await t.version() };
    });
  }

  // ---- reads ----

  /**
   * QueryTable: the result as Arrow IPC *file* bytes. A result above `maxBytes` is refused
   * (code 13), never truncated.
   */
  async query(location: string, request: object, options: { maxBytes?: number } = {}): Promise<Buffer> {
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    return this.use(location, readSelection(request), async (t, lib) => {
      const bytes = encodeIpcFile(await runQuery(await buildQuery(t, lib, request, { checkColumnLater: true }), maxBytes));
      // Buffers were counted while reading; the encoded file adds framing on top of them.
      if (bytes.length > maxBytes) throw resultTooLarge(maxBytes);
      return bytes;
    }, SHARED);
  }

  async explainPlan(location: string, request: object): Promise<string> {
    const body = asObject(request);
    const query = asObject(body.query, 'query');
    const verbose = optBool(body.verbose, 'verbose') ?? false;
    const selection = readSelection({ ...query, branch: query.branch ?? body.branch });
    return this.use(location, selection, async (t, lib) => (await buildQuery(t, lib, query)).query.explainPlan(verbose), SHARED);
  }

  /** AnalyzeTableQueryPlan: runs the query and reports its metrics. */
  async analyzePlan(location: string, request: object): Promise<string> {
    return this.use(location, readSelection(request), async (t, lib) => (await buildQuery(t, lib, request)).query.analyzePlan(), SHARED);
  }

  async countRows(location: string, request: object = {}): Promise<number> {
    const predicate = optSql(asObject(request).predicate, 'predicate');
    return this.use(location, readSelection(request), (t) => t.countRows(predicate), SHARED);
  }

  async stats(location: string, request: object = {}): Promise<TableStats> {
    return this.use(location, readSelection(request), (t) => stats(t), SHARED);
  }

  async describe(location: string, request: object = {}): Promise<TableDescription> {
    return this.use(location, readSelection(request), (t) => describe(t), SHARED);
  }

  /** The dataset's own version list (for the table's view; the catalog keeps its own records). */
  async listVersions(location: string, request: object = {}): Promise<{ versions: TableVersion[]; page_token?: string }> {
    const selection = readSelection({ branch: asObject(request).branch });
    return this.use(location, selection, (t) => listVersions(t, parseLocation(location), selection.branch, request));
  }

  // ---- indexes ----

  async createIndex(location: string, request: object): Promise<Empty> {
    return this.use(location, writeTarget(request), (t, lib) => createIndex(t, lib, request));
  }

  /** Validates a CreateTableIndex request against the table without building (before it is queued). */
  async checkIndex(location: string, request: object): Promise<{ name: string }> {
    return this.use(location, writeTarget(request), (t, lib) => checkIndex(t, lib, request));
  }

  async listIndices(location: string, request: object = {}): Promise<{ indexes: IndexContent[]; page_token?: string }> {
    return this.use(location, readSelection(request), (t) => listIndices(t, request));
  }

  async indexStats(location: string, request: object): Promise<IndexStats> {
    const name = reqString(asObject(request).index_name, 'index_name');
    return this.use(location, readSelection(request), (t) => indexStats(t, name));
  }

  async rebuildIndex(location: string, request: object): Promise<Empty> {
    return this.use(location, writeTarget(request), (t, lib) => createIndex(t, lib, request, { replace: true }));
  }

  async dropIndex(location: string, request: object): Promise<Empty> {
    const name = reqString(asObject(request).index_name, 'index_name');
    return this.use(location, writeTarget(request), (t) => dropIndex(t, name));
  }

  // ---- tags and branches ----

  async listTags(location: string, request: object = {}): Promise<{ tags: Record<string, refs.TagContents>; page_token?: string }> {
    return this.use(location, {}, (t) => refs.listTags(t, request));
  }

  async getTagVersion(location: string, request: object): Promise<{ version: number; branch?: string }> {
    return this.use(location, {}, (t) => refs.getTagVersion(t, request));
  }

  async createTag(location: string, request: object): Promise<Empty> {
    return this.use(location, {}, (t) => refs.createTag(t, request));
  }

  async updateTag(location: string, request: object): Promise<Empty> {
    return this.use(location, {}, (t) => refs.updateTag(t, request));
  }

  async deleteTag(location: string, request: object): Promise<Empty> {
    return this.use(location, {}, (t) => refs.deleteTag(t, request));
  }

  async listBranches(
    location: string,
    request: object = {},
  ): Promise<{ branches: Record<string, refs.BranchContents>; page_token?: string }> {
    const uri = parseLocation(location).uri;
    return this.use(location, {}, (t) => refs.listBranches(t, request, (rel) => this.readTableFile(uri, rel)));
  }

  async createBranch(location: string, request: object): Promise<Empty> {
    return this.use(location, {}, (t) => refs.createBranch(t, request), { context: { creatingBranch: true } });
  }

  async deleteBranch(location: string, request: object): Promise<Empty> {
    return this.use(location, {}, (t) => refs.deleteBranch(t, request));
  }

  // ---- schema ----

  async addColumns(location: string, request: object): Promise<{ version: number }> {
    return this.use(location, writeTarget(request), (t, lib) => schema.addColumns(t, lib, request));
  }

  /**
   * The binding of a computed column (12: no such column; 13: not computed), and a check that
   * `where`, when given, is a filter this table can plan: what AlterTableBackfillColumns
   * verifies before it queues a backfill.
   */
  async checkBackfill(location: string, request: { column: string; where?: string; branch?: string }): Promise<computed.Binding> {
    return this.use(location, writeTarget(request), async (t) => {
      const binding = await computed.computedBinding(t, request.column);
      if (request.where !== undefined) await computed.checkFilter(t, request.where);
      return binding;
    });
  }

  async backfillKey(location: string, request: { column: string; branch?: string }): Promise<string | undefined> {
    return this.use(location, writeTarget(request), (t) => columnBackfill.backfillKey(t, request.column));
  }

  async backfillSlice(location: string, request: BackfillSliceRequest): Promise<BackfillSlice> {
    return this.use(location, writeTarget(request), (t) => columnBackfill.backfillSlice(t, request));
  }

  /** Computes a computed column's rows: those matching `where`, by default those still null. */
  async backfill(
    location: string,
    request: { column: string; where?: string; branch?: string },
  ): Promise<{ updated_rows: number; version: number; expression: string; where: string }> {
    return this.use(location, writeTarget(request), (t) => computed.backfill(t, request));
  }

  async alterColumns(location: string, request: object): Promise<{ version: number }> {
    return this.use(location, writeTarget(request), (t) => schema.alterColumns(t, request));
  }

  async dropColumns(location: string, request: object): Promise<{ version: number }> {
    return this.use(location, writeTarget(request), (t) => schema.dropColumns(t, request));
  }

  async updateFieldMetadata(
    location: string,
    request: object,
  ): Promise<{ version: number; fields: Record<string, Record<string, string>> }> {
    return this.use(location, writeTarget(request), (t) => schema.updateFieldMetadata(t, request));
  }

  // ---- plumbing ----

  /**
   * Runs `fn` on a handle for `selection`: the table's kept handle when `options.shared` says `fn`
   * never moves it and the selection is the latest of main (table-handles.ts), otherwise one of
   * its own, closed afterwards.
   */
  private async use<T>(
    location: string,
    selection: ReadSelection,
    fn: (table: Table, lib: LanceDb) => Promise<T>,
    options: { shared?: boolean; context?: MapContext } = {},
  ): Promise<T> {
    const loc = parseLocation(location);
    const latest = selection.version === undefined && selection.branch === undefined && selection.tag === undefined;
    let kept: { db: Connection; handle: Promise<Table>; release(): void } | undefined;
    let table: Table | undefined;
    try {
      if (options.shared && latest) {
        const db = await this.connect(loc.parent);
        const { handle, opened, release } = latestHandle(db, loc.name);
        kept = { db, handle, release };
        const shared = await handle;
        if (!opened) await shared.checkoutLatest();
        return await fn(shared, loadLanceDb());
      }
      table = await this.open(loc, selection);
      return await fn(table, loadLanceDb());
    } catch (err) {
      // A CatalogError here is our own refusal of the request (a bad k, a batch that does not
      // fit): the handle is sound, and dropping it would make every bad request cost a reopen.
      if (kept && !(err instanceof CatalogError)) forgetHandle(kept.db, loc.name, kept.handle);
      throw mapLanceError(err, options.context);
    } finally {
      table?.close();
      kept?.release();
    }
  }

  private async open(loc: TableLocation, selection: ReadSelection): Promise<Table> {
    const db = await this.connect(loc.parent);
    const { version, branch, tag } = selection;
    const table = await db.openTable(loc.name, undefined, {
      ...(version === undefined ? {} : { version }),
      ...(branch === undefined ? {} : { branch }),
    });
    if (tag !== undefined) {
      try {
        await table.checkout(tag);
      } catch (err) {
        table.close();
        throw err;
      }
    }
    return table;
  }

  private connect(parent: string): Promise<Connection> {
    return connectCached(parent, this.storageOptions);
  }

  private async readTableFile(uri: string, relativePath: string): Promise<string | undefined> {
    if (this.options.readTableFile) return this.options.readTableFile(uri, relativePath);
    const local = localPathInside(parseLocation(uri), relativePath);
    if (!local) return undefined;
    try {
      return await readFile(local, 'utf8');
    } catch {
      return undefined;
    }
  }
}

/** For `use`: `fn` never moves its handle, so it may run on the table's kept one. */
const SHARED = { shared: true } as const;

function branchOf(body: Json): string | undefined {
  const branch = optRefName(body.branch, 'branch');
  return branch === 'main' ? undefined : branch;
}

function writeTarget(request: unknown): ReadSelection {
  return { branch: branchOf(asObject(request)) };
}

function readSelection(request: unknown): ReadSelection {
  const body = asObject(request);
  const version = optInt(body.version, 'version');
  const tag = optRefName(body.tag, 'tag');
  if (tag !== undefined && version !== undefined) throw new InvalidInputError('give either "version" or "tag", not both');
  return { branch: branchOf(body), version, tag };
}
