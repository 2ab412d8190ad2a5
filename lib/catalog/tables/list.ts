import { TableNotFoundError } from '../../errors.js';
import { DROP_MARK_SUFFIX, dropMarkedSegment, encodeSegment, keys, parseDataMarkerKey, parseTreeKey } from '../../registry/keys.js';
import type { ProjectRecord } from '../../registry/records.js';
import { requireNamespace } from '../namespaces/lookup.js';
import { validateId } from '../ids.js';
import type { CatalogServices } from '../services.js';
import { findManifest } from '../dataset/manifests.js';
import { hasData, readTable, resolveTable } from '../protocols/lookup.js';
import { putMarkers } from '../protocols/markers.js';

/** Tables probed for data at once by `include_declared=false` in a namespace without has-data markers. */
const PROBE_WIDTH = 16;

/** Tables directly in a namespace: byte order, exclusive start-after token, one LIST per page. */
export async function listTables(
  services: CatalogServices,
  input: { namespace: readonly string[]; pageToken?: string; limit?: number; includeDeclared: boolean },
): Promise<{ tables: string[]; page_token?: string }> {
  validateId('namespace', input.namespace);
  const prefix = keys.tablesPrefix(services.project, input.namespace);
  if (input.includeDeclared && input.limit !== 0) {
    // The namespace check and the LIST are independent: one round trip for both (the page is
    // thrown away if the namespace turns out not to exist).
    const marked = new Set<string>();
    const [, page] = await Promise.all([
      requireNamespace(services, input.namespace),
      services.registry.listNames(prefix, {
        startAfter: input.pageToken,
        limit: input.limit,
        encode: encodeSegment,
        onOther: (segment) => {
          const name = dropMarkedSegment(segment);
          if (name !== undefined) marked.add(name);
        },
      }),
    ]);
    const tables = await withoutRenamedAway(services, page.names.map((name) => [...input.namespace, name]), (id) => marked.has(encodeSegment(id[id.length - 1])));
    // The token is the last name the LIST passed, listed or not: the next page starts after it.
    const names = tables.map((id) => id[id.length - 1]);
    return page.more ? { tables: names, page_token: page.names[page.names.length - 1] } : { tables: names };
  }
  if (input.limit === 0) {
    await requireNamespace(services, input.namespace);
    return { tables: [] };
  }
  if (input.namespace.length > 0) {
    // A namespace that keeps has-data markers (markers.ts) pages through them: the namespace
    // read and both marker LISTs in one round trip.
    const marked = (kind: 'data' | 'maybe', startAfter: string | undefined) =>
      services.registry.listNames(keys.dataMarkersPrefix(services.project, kind, input.namespace), {
        startAfter,
        limit: input.limit,
        encode: encodeSegment,
      });
    const [namespace, data, maybe] = await Promise.all([
      requireNamespace(services, input.namespace),
      marked('data', input.pageToken),
      marked('maybe', input.pageToken),
    ]);
    if (namespace?.value.tableMarkers) {
      return listMarked(services, input, new Cursor(data, (after) => marked('data', after)), new Cursor(maybe, (after) => marked('maybe', after)));
    }
  } else {
    await requireNamespace(services, input.namespace);
  }
  // A namespace from before markers (or the root): probe every table. Declared-only tables are
  // filtered out, so keep reading until the page is full.
  const tables: string[] = [];
  let startAfter = input.pageToken;
  for (;;) {
    const page = await services.registry.listNames(prefix, { startAfter, limit: input.limit ?? 1000, encode: encodeSegment });
    // Each name costs a record read and a LIST of its versions: probe a window of them at a
    // time, in parallel, and use the answers in name order.
    for (let at = 0; at < page.names.length; at += PROBE_WIDTH) {
      const window = page.names.slice(at, at + PROBE_WIDTH);
      const withData = await Promise.all(window.map((name) => tableHasData(services, [...input.namespace, name])));
      for (const [i, name] of window.entries()) {
        if (!withData[i]) continue;
        // A token only when another listed table really follows (spec: "only if more remain").
        if (input.limit !== undefined && tables.length === input.limit) return { tables, page_token: tables[tables.length - 1] };
        tables.push(name);
      }
    }
    if (!page.more) return { tables };
    startAfter = page.names[page.names.length - 1];
  }
}

/**
 * The listed tables DescribeTable answers for: a name with a rename mark beside it
 * (protocols/rename-marks.ts) is read the way describe reads it (settled: a rename a crash left
 * half-way is finished or undone first; read-only mode answers what settling would leave), and
 * left out when no live table is there. Only marked names cost a read (docs/protocols.md, "The
 * rename mark").
 */
async function withoutRenamedAway(
  services: CatalogServices,
  ids: readonly (readonly string[])[],
  isMarked: (id: readonly string[]) => boolean,
): Promise<(readonly string[])[]> {
  const gone = new Set<readonly string[]>();
  await Promise.all(
    ids.filter(isMarked).map(async (id) => {
      if (!(await readTable(services, id))) gone.add(id);
    }),
  );
  return ids.filter((id) => !gone.has(id));
}

/** A sorted name listing read one page at a time. */
class Cursor {
  private at = 0;
  constructor(
    private page: { names: string[]; more: boolean },
    private readonly fetch: (after: string) => Promise<{ names: string[]; more: boolean }>,
  ) {}

  async peek(): Promise<string | undefined> {
    while (this.at >= this.page.names.length) {
      const last = this.page.names[this.page.names.length - 1];
      if (!this.page.more || last === undefined) return undefined;
      this.page = await this.fetch(last);
      this.at = 0;
    }
    return this.page.names[this.at];
  }

  skip(): void {
    this.at++;
  }
}

/**
 * The page from the markers: every `data` name, and each `maybe` name (a table whose client
 * commits straight to storage) whose storage shows a committed version. A probe that finds data
 * writes the `data` marker, so the table is not probed again (except in read-only mode).
 */
async function listMarked(
  services: CatalogServices,
  input: { namespace: readonly string[]; limit?: number },
  data: Cursor,
  maybe: Cursor,
  idOf: (name: string) => readonly string[] = (name) => [...input.namespace, name],
): Promise<{ tables: string[]; page_token?: string }> {
  const tables: string[] = [];
  for (;;) {
    const [d, m] = await Promise.all([data.peek(), maybe.peek()]);
    if (d === undefined && m === undefined) return { tables };
    let name: string;
    let accept = true;
    if (m === undefined || (d !== undefined && compareNames(d, m) <= 0)) {
      name = d!;
      data.skip();
      if (m === name) maybe.skip();
    } else {
      name = m;
      maybe.skip();
      accept = await probeAndMark(services, idOf(name));
    }
    if (!accept || idOf(name).length === 0) continue;
    // A token only when another listed table really follows (spec: "only if more remain").
    if (input.limit !== undefined && tables.length === input.limit) return { tables, page_token: tables[tables.length - 1] };
    tables.push(name);
  }
}

const markerRoot = (services: CatalogServices, kind: 'data' | 'maybe') => keys.dataMarkersSubtree(services.project, kind, []);

/**
 * One page of the project's `kind` markers after `after` (a key below the kind's root), as keys
 * relative to that root: the same relative key for both kinds, and in the tables' key order.
 */
async function listMarkerKeys(
  services: CatalogServices,
  kind: 'data' | 'maybe',
  after: string | undefined,
  limit: number,
): Promise<{ names: string[]; more: boolean }> {
  const root = markerRoot(services, kind);
  const page = await services.registry.listKeys({ prefix: root, startAfter: after === undefined ? undefined : root + after, limit });
  const names = page.keys.map((key) => key.slice(root.length));
  return { names, more: page.truncated && page.keys.length > 0 };
}

/** Names compare as their encoded keys do (encodeSegment preserves byte order). */
const compareNames = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

async function probeAndMark(services: CatalogServices, id: readonly string[]): Promise<boolean> {
  try {
    const t = await resolveTable(services, id);
    if (!(await hasData(t.store, t.record.path))) return false;
    // Read-only mode: the answer is the probe's; the marker waits for a writer (or the next
    // listing by a function that may write), so this table is probed again until then.
    if (!services.readOnly) await putMarkers(services, id, t.record.uid, ['data']);
    return true;
  } catch (err) {
    if (err instanceof TableNotFoundError) return false; // dropped while we listed
    throw err;
  }
}

async function tableHasData(services: CatalogServices, id: readonly string[]): Promise<boolean> {
  try {
    const t = await resolveTable(services, id);
    return await hasData(t.store, t.record.path);
  } catch (err) {
    if (err instanceof TableNotFoundError) return false; // dropped while we listed
    throw err;
  }
}

/**
 * Every table of the project (GET /v1/table), as full ids joined with the request delimiter.
 * The token is such a joined id; the walk resumes right after that table's registry key.
 */
export async function listAllTables(
  services: CatalogServices,
  input: { delimiter: string; pageToken?: string; limit?: number; includeDeclared: boolean },
): Promise<{ tables: string[]; page_token?: string }> {
  if (input.limit === 0) return { tables: [] };
  const tokenId = input.pageToken ? input.pageToken.split(input.delimiter) : undefined;
  if (!input.includeDeclared) {
    // Markers mirror the table keys under one root per kind, so the project's markers list in
    // the same key order as its table records: the token resumes both alike. A project created
    // since markers exist (its record says so) is listed from them: the project read and both
    // first marker LISTs in one round trip; an older one is probed table by table below.
    const want = input.limit === undefined ? 1000 : Math.min(1000, input.limit + 1);
    const marked = (kind: 'data' | 'maybe', after: string | undefined) => listMarkerKeys(services, kind, after, want);
    const start = (kind: 'data' | 'maybe') => (tokenId ? keys.dataMarker(services.project, kind, tokenId).slice(markerRoot(services, kind).length) : undefined);
    const [project, data, maybe] = await Promise.all([
      services.registry.read<ProjectRecord>(keys.project(services.project)),
      marked('data', start('data')),
      marked('maybe', start('maybe')),
    ]);
    if (project?.value.tableMarkers) {
      // A key that is no marker (none is written there) names no table: it is never accepted.
      const idOf = (rest: string) => parseDataMarkerKey(services.project, 'data', markerRoot(services, 'data') + rest) ?? [];
      const page = await listMarked(
        services,
        { namespace: [], limit: input.limit },
        new Cursor(data, (after) => marked('data', after)),
        new Cursor(maybe, (after) => marked('maybe', after)),
        idOf,
      );
      const tables = page.tables.map((rest) => idOf(rest).join(input.delimiter));
      return page.page_token === undefined ? { tables } : { tables, page_token: tables[tables.length - 1] };
    }
  }
  const prefix = keys.subtree(services.project, []);
  let startAfter = tokenId ? keys.table(services.project, tokenId) : undefined;
  const tables: string[] = [];
  // One LIST of a key past the page per page: namespace records share the walked subtree, so
  // the page holds the tables among those keys and may be short of `limit` (the spec's limit is
  // an upper bound), with a token whenever keys follow. Only a LIST with no table at all (a run
  // of namespace records, or tables filtered out) makes the walk take another.
  //
  // A table's rename mark is the key right after its record (keys.ts, DROP_MARK_SUFFIX): a table
  // whose record is the last key of a truncated LIST may have its mark in the next one, so it is
  // left to the next page (whose LIST starts at it), and a marked table is read as describe
  // reads it (withoutRenamedAway).
  for (;;) {
    const want = input.limit === undefined ? 1000 : Math.min(1000, input.limit - tables.length + 1);
    const page = await services.registry.listKeys({ prefix, startAfter, limit: want });
    const walked = page.truncated && page.keys.length > 1 ? page.keys.slice(0, -1) : page.keys;
    const marks = new Set(walked.filter((key) => dropMarkedSegment(key.slice(key.lastIndexOf('/') + 1)) !== undefined));
    const found: { id: readonly string[]; key: string }[] = [];
    for (const key of walked) {
      const parsed = parseTreeKey(services.project, key);
      if (parsed?.kind === 'table') found.push({ id: parsed.id, key });
    }
    const markedKeys = new Set(found.filter((t) => marks.has(t.key + DROP_MARK_SUFFIX)).map((t) => t.id));
    const live = new Set(await withoutRenamedAway(services, found.map((t) => t.id), (id) => markedKeys.has(id)));
    for (const { id } of found) {
      if (!live.has(id)) continue;
      if (!input.includeDeclared && !(await tableHasData(services, id))) continue;
      if (input.limit !== undefined && tables.length === input.limit) {
        return { tables, page_token: tables[tables.length - 1] };
      }
      tables.push(id.join(input.delimiter));
    }
    const last = walked[walked.length - 1];
    if (!page.truncated || !last) return { tables };
    if (input.limit !== undefined && tables.length > 0) return { tables, page_token: tables[tables.length - 1] };
    startAfter = last;
  }
}

/** TableExists: the record exists, and so does `version` when one is asked for. */
export async function tableExists(services: CatalogServices, id: readonly string[], version?: number): Promise<void> {
  const t = await resolveTable(services, id);
  if (version !== undefined && !(await findManifest(t.store, t.record.path, version))) {
    throw new TableNotFoundError(`table ${JSON.stringify(id)} has no version ${version}`);
  }
}

