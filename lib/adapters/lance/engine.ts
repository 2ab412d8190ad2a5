/**
 * The data plane: spec data operations on a Lance table identified by its storage location.
 *
 * Requests are typed (lib/ports/data-inputs.ts), decoded and checked by the data-plane handlers
 * (lib/operations/data); this engine checks only what needs the table. Responses are the spec's
 * response objects; failures are CatalogErrors. Connections are cached per (parent, storage options) for
 * the life of the process. Calls on the latest version of the main branch that never move their
 * handle (queries, counts, describes, inserts, merges, updates, deletes) share one kept handle per
 * table (table-handles.ts), brought to the latest version once at the start of each call; every
 * other call opens its own and closes it. Either way a call sees the storage as it was when the
 * call started, and its own writes.
 */
import { readFile } from 'node:fs/promises';
import { CatalogError } from '../../errors.js';
import { noteCommit } from '../../events/commits.js';
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
import * as schema from './schema.js';
import * as writes from './writes.js';
import type {
  AddColumnsInput,
  AlterColumnsInput,
  BackfillSlice,
  BackfillSliceRequest,
  BackfillRequest,
  BranchInput,
  CountInput,
  CreateMode,
  DataEngine,
  DeleteInput,
  DropColumnsInput,
  Empty,
  ExplainInput,
  FieldMetadataInput,
  IndexListing,
  IndexRequest,
  InsertMode,
  MergeInsertInput,
  NamedIndex,
  NewBranchInput,
  Paging,
  QueryInput,
  ReadSelection,
  RestoreInput,
  TagInput,
  TagVersionInput,
  UpdateInput,
  VersionListing,
  WriteTarget,
} from '../../ports/data-engine.js';

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

/** The DataEngine port over LanceDB. */
export class LanceDataEngine implements DataEngine {
  private readonly storageOptions: Record<string, string>;

  constructor(private readonly options: LanceDataEngineOptions = {}) {
    this.storageOptions = { ...(options.storageOptions ?? {}) };
  }

  // ---- table lifecycle and writes ----

  async createTable(location: string, ipcBody: Buffer, m: CreateMode = 'create'): Promise<{ version: number }> {
    const data = decodeIpc(ipcBody);
    const loc = parseLocation(location);
    try {
      const db = await this.connect(loc.parent);
      const table = await db.createTable(loc.name, data, {
        mode: m === 'overwrite' ? 'overwrite' : 'create',
        existOk: m === 'exist_ok',
      });
      try {
        return await noted({}, { version: await table.version() });
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
    mode: InsertMode = 'append',
    target: WriteTarget = {},
  ): Promise<{ version: number; num_inserted_rows: number }> {
    const data = decodeIpc(ipcBody);
    return noted(target, this.use(location, target, (t) => writes.insert(t, data, mode), SHARED));
  }

  async mergeInsert(location: string, ipcBody: Buffer, input: MergeInsertInput): Promise<writes.MergeInsertResponse> {
    const data = decodeIpc(ipcBody);
    return noted(input, this.use(location, branchOnly(input), (t) => writes.mergeInsert(t, data, input), SHARED));
  }

  async update(location: string, input: UpdateInput): Promise<{ updated_rows: number; version: number }> {
    return noted(input, this.use(location, branchOnly(input), (t) => writes.update(t, input), SHARED));
  }

  async delete(location: string, input: DeleteInput): Promise<{ version: number }> {
    return noted(input, this.use(location, branchOnly(input), (t) => writes.deleteRows(t, input.predicate), SHARED));
  }

  async restore(location: string, input: RestoreInput): Promise<{ version: number }> {
    return noted(
      input,
      this.use(location, { ...branchOnly(input), version: input.version }, async (t) => {
        await t.restore();
        return { version: await t.version() };
      }),
    );
  }

  // ---- reads ----

  /**
   * QueryTable: the result as Arrow IPC *file* bytes. A result above `maxBytes` is refused
   * (code 13), never truncated.
   */
  async query(location: string, input: QueryInput, options: { maxBytes?: number } = {}): Promise<Buffer> {
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    return this.use(location, selectionOf(input), async (t, lib) => {
      const bytes = encodeIpcFile(await runQuery(await buildQuery(t, lib, input, { checkColumnLater: true }), maxBytes));
      // Buffers were counted while reading; the encoded file adds framing on top of them.
      if (bytes.length > maxBytes) throw resultTooLarge(maxBytes);
      return bytes;
    }, SHARED);
  }

  async explainPlan(location: string, { query, verbose }: ExplainInput): Promise<string> {
    return this.use(location, selectionOf(query), async (t, lib) => (await buildQuery(t, lib, query)).query.explainPlan(verbose), SHARED);
  }

  /** AnalyzeTableQueryPlan: runs the query and reports its metrics. */
  async analyzePlan(location: string, input: QueryInput): Promise<string> {
    return this.use(location, selectionOf(input), async (t, lib) => (await buildQuery(t, lib, input)).query.analyzePlan(), SHARED);
  }

  async countRows(location: string, input: CountInput = {}): Promise<number> {
    return this.use(location, selectionOf(input), (t) => t.countRows(input.predicate), SHARED);
  }

  async stats(location: string, selection: ReadSelection = {}): Promise<TableStats> {
    return this.use(location, selectionOf(selection), (t) => stats(t), SHARED);
  }

  async describe(location: string, selection: ReadSelection = {}): Promise<TableDescription> {
    return this.use(location, selectionOf(selection), (t) => describe(t), SHARED);
  }

  /** The dataset's own version list (for the table's view; the catalog keeps its own records). */
  async listVersions(location: string, listing: VersionListing = { descending: false }): Promise<{ versions: TableVersion[]; page_token?: string }> {
    const selection = branchOnly(listing);
    return this.use(location, selection, (t) => listVersions(t, parseLocation(location), listing));
  }

  // ---- indexes ----

  async createIndex(location: string, request: IndexRequest): Promise<Empty> {
    return this.indexCommit(location, request, (t, lib) => createIndex(t, lib, request));
  }

  /** Validates a CreateTableIndex request against the table without building (before it is queued). */
  async checkIndex(location: string, request: IndexRequest): Promise<{ name: string }> {
    return this.use(location, branchOnly(request), (t, lib) => checkIndex(t, lib, request));
  }

  async listIndices(location: string, listing: IndexListing = {}): Promise<{ indexes: IndexContent[]; page_token?: string }> {
    return this.use(location, selectionOf(listing), (t) => listIndices(t, listing));
  }

  async indexStats(location: string, index: NamedIndex & ReadSelection): Promise<IndexStats> {
    return this.use(location, selectionOf(index), (t) => indexStats(t, index.indexName));
  }

  async rebuildIndex(location: string, request: IndexRequest): Promise<Empty> {
    return this.indexCommit(location, request, (t, lib) => createIndex(t, lib, request, { replace: true }));
  }

  async dropIndex(location: string, index: NamedIndex & WriteTarget): Promise<Empty> {
    return this.indexCommit(location, index, (t) => dropIndex(t, index.indexName));
  }

  // ---- tags and branches ----

  async listTags(location: string, paging: Paging = {}): Promise<{ tags: Record<string, refs.TagContents>; page_token?: string }> {
    return this.use(location, {}, (t) => refs.listTags(t, paging));
  }

  async getTagVersion(location: string, tag: TagInput): Promise<{ version: number; branch?: string }> {
    return this.use(location, {}, (t) => refs.getTagVersion(t, tag.tag));
  }

  async createTag(location: string, tag: TagVersionInput): Promise<Empty> {
    return this.use(location, {}, (t) => refs.createTag(t, tag));
  }

  async updateTag(location: string, tag: TagVersionInput): Promise<Empty> {
    return this.use(location, {}, (t) => refs.updateTag(t, tag));
  }

  async deleteTag(location: string, tag: TagInput): Promise<Empty> {
    return this.use(location, {}, (t) => refs.deleteTag(t, tag.tag));
  }

  async listBranches(location: string, paging: Paging = {}): Promise<{ branches: Record<string, refs.BranchContents>; page_token?: string }> {
    const uri = parseLocation(location).uri;
    return this.use(location, {}, (t) => refs.listBranches(t, paging, (rel) => this.readTableFile(uri, rel)));
  }

  async createBranch(location: string, branch: NewBranchInput): Promise<Empty> {
    return this.use(location, {}, (t) => refs.createBranch(t, branch), { context: { creatingBranch: true } });
  }

  async deleteBranch(location: string, branch: BranchInput): Promise<Empty> {
    return this.use(location, {}, (t) => refs.deleteBranch(t, branch.name));
  }

  // ---- schema ----

  async addColumns(location: string, input: AddColumnsInput): Promise<{ version: number }> {
    return noted(input, this.use(location, branchOnly(input), (t, lib) => schema.addColumns(t, lib, input.columns)));
  }

  /**
   * The binding of a computed column (12: no such column; 13: not computed), and a check that
   * `where`, when given, is a filter this table can plan: what AlterTableBackfillColumns
   * verifies before it queues a backfill.
   */
  async checkBackfill(location: string, request: BackfillRequest): Promise<computed.Binding> {
    return this.use(location, branchOnly(request), async (t) => {
      const binding = await computed.computedBinding(t, request.column);
      if (request.where !== undefined) await computed.checkFilter(t, request.where);
      return binding;
    });
  }

  async backfillKey(location: string, request: { column: string; branch?: string }): Promise<string | undefined> {
    return this.use(location, branchOnly(request), (t) => columnBackfill.backfillKey(t, request.column));
  }

  async backfillSlice(location: string, request: BackfillSliceRequest): Promise<BackfillSlice> {
    return this.use(location, branchOnly(request), (t) => columnBackfill.backfillSlice(t, request));
  }

  /** Computes a computed column's rows: those matching `where`, by default those still null. */
  async backfill(location: string, request: BackfillRequest): Promise<{ updated_rows: number; version: number; expression: string; where: string }> {
    return noted(request, this.use(location, branchOnly(request), (t) => computed.backfill(t, request)));
  }

  async alterColumns(location: string, input: AlterColumnsInput): Promise<{ version: number }> {
    return noted(input, this.use(location, branchOnly(input), (t) => schema.alterColumns(t, input.alterations)));
  }

  async dropColumns(location: string, input: DropColumnsInput): Promise<{ version: number }> {
    return noted(input, this.use(location, branchOnly(input), (t) => schema.dropColumns(t, input.columns)));
  }

  async updateFieldMetadata(location: string, input: FieldMetadataInput): Promise<{ version: number; fields: Record<string, Record<string, string>> }> {
    return noted(input, this.use(location, branchOnly(input), (t) => schema.updateFieldMetadata(t, input.updates)));
  }

  // ---- plumbing ----

  /**
   * An index build, rebuild or drop: its answer is `{}`, so the version it committed is read from
   * the handle that committed it (in memory, no storage read) and noted (lib/events/commits.ts).
   */
  private async indexCommit(location: string, target: WriteTarget, fn: (table: Table, lib: LanceDb) => Promise<unknown>): Promise<Empty> {
    const version = await this.use(location, branchOnly(target), async (t, lib) => {
      await fn(t, lib);
      return t.version();
    });
    await noteCommit(version, target.branch);
    return {};
  }

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

/** Main is the default branch: a handle opened on it is the latest handle. */
const notMain = (branch: string | undefined) => (branch === 'main' ? undefined : branch);

/** The branch a write (or a branch-scoped read) runs on, and nothing else of its input. */
function branchOnly(input: WriteTarget): ReadSelection {
  return { branch: notMain(input.branch) };
}

/** The snapshot of a read, and nothing else of its input. */
function selectionOf(input: ReadSelection): ReadSelection {
  return { branch: notMain(input.branch), version: input.version, tag: input.tag };
}

/**
 * A write's answer, after noting the version it committed on the main branch (lib/events/commits.ts):
 * every commit the catalog makes through this engine is named to whoever runs the work (the door's
 * event, the job's), so the change relay never takes it for a commit made outside the catalog.
 */
async function noted<T extends { version: number }>(target: WriteTarget, result: Promise<T> | T): Promise<T> {
  const answer = await result;
  await noteCommit(answer.version, target.branch);
  return answer;
}
