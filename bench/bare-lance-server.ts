/**
 * The data-plane bench's fair peer: a bare `node:http` server that makes the same LanceDB calls
 * rask's data plane makes for CreateTable, InsertIntoTable and QueryTable, and nothing else — no
 * registry, no validation, no arbitration, no freshness check. Arrow IPC in
 * (`tableFromIPC`), `createTable` / `add` / `search().limit().select().toArrow()`, IPC file out;
 * tables stay open after their create. It answers the spec's URL paths as rask does (a namespace
 * create is a no-op), so bench/data-plane.ts drives both with the same URLs and bodies. Started in a process of its own by bench/data-plane.ts,
 * as rask is, so neither server shares an event loop with the client.
 *
 *   npx tsx bench/bare-lance-server.ts <dir>     (prints `listening <url>` once ready)
 */
import * as lancedb from '@lancedb/lancedb';
import { createServer, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type * as ArrowModule from 'apache-arrow';

// The CJS copy LanceDB itself loads (see lib/data/arrow.ts for why the ESM one will not do).
const arrow = createRequire(import.meta.url)('apache-arrow') as typeof ArrowModule;

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: bare-lance-server.ts <dir>');
  const db = await lancedb.connect(dir);
  const tables = new Map<string, lancedb.Table>();
  const server = createServer((req, res) => {
    // The spec's routes, as rask serves them, so one client drives both servers:
    // /v1/{namespace|table}/{id}/{op}?delimiter=… (the table's id, delimiter and all, names it).
    const [, , kind, rawId, op] = (req.url ?? '').split('?')[0].split('/');
    // LanceDB table names allow letters, digits, `_`, `-` and `.`: `bench$c0` becomes `bench_c0`.
    const id = decodeURIComponent(rawId ?? '').replace(/[^A-Za-z0-9_.-]/g, '_');
    const reply = (status: number, body: Buffer | string, type: string) =>
      res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) }).end(body);
    bodyOf(req)
      .then(async (bytes) => {
        if (kind === 'namespace') return reply(200, '{}', 'application/json');
        if (op === 'create') {
          const table = await db.createTable(id, arrow.tableFromIPC(bytes));
          tables.set(id, table);
          return reply(200, JSON.stringify({ version: await table.version() }), 'application/json');
        }
        const table = tables.get(id);
        if (!table) return reply(404, '{"error":"no such table"}', 'application/json');
        if (op === 'insert') {
          await table.add(arrow.tableFromIPC(bytes));
          return reply(200, JSON.stringify({ version: await table.version() }), 'application/json');
        }
        if (op === 'query') {
          const q = JSON.parse(bytes.toString()) as { vector: number[]; k: number; columns?: string[] };
          let search = table.search(q.vector).limit(q.k);
          if (q.columns) search = search.select(q.columns);
          const result = (await search.toArrow()) as unknown as ArrowModule.Table;
          return reply(200, Buffer.from(arrow.tableToIPC(result, 'file')), 'application/vnd.apache.arrow.file');
        }
        return reply(404, '{"error":"no such operation"}', 'application/json');
      })
      .catch((err: unknown) => reply(500, JSON.stringify({ error: String(err) }), 'application/json'));
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    console.log(`listening http://127.0.0.1:${address.port}`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

await main();
