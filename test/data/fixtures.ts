/**
 * Arrow IPC request bodies for the data-plane tests. apache-arrow is imported the ordinary (ESM)
 * way here on purpose: what reaches the engine is bytes, exactly as over HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  Field,
  FixedSizeList,
  Float32,
  Float64,
  Int64,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableFromIPC,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { expect } from 'vitest';
import { CatalogError } from '../../lib/errors.js';

export const DIM = 8;
export const WORDS = ['apple', 'banana', 'cherry', 'date', 'elder'];

export const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('text', new Utf8(), true),
  new Field('labels', new List(new Field('item', new Utf8(), true)), true),
  new Field('vec', new FixedSizeList(DIM, new Field('item', new Float32(), true)), true),
]);

export function vectorOf(i: number): number[] {
  return Array.from({ length: DIM }, (_, j) => Math.sin(i * DIM + j));
}

/** Rows `start … start+count-1`: id, "<word> fruit number <id>", two labels, an 8-d vector. */
export function rowsTable(count: number, start = 0, metadata?: Map<string, string>): Table {
  const ids = Array.from({ length: count }, (_, i) => i + start);
  const s = metadata ? new Schema(schema.fields, metadata) : schema;
  const children = [
    vectorFromArray(ids.map(BigInt), new Int64()),
    vectorFromArray(ids.map((i) => `${WORDS[i % 5]} fruit number ${i}`), new Utf8()),
    vectorFromArray(ids.map((i) => [WORDS[i % 5], WORDS[(i + 1) % 5]]), schema.fields[2].type),
    vectorFromArray(ids.map(vectorOf), schema.fields[3].type),
  ].map((v) => v.data[0]);
  const data = makeData({ type: new Struct(s.fields), length: count, nullCount: 0, children });
  return new Table([new RecordBatch(s, data)]);
}

export function ipcRows(count: number, start = 0, format: 'stream' | 'file' = 'stream'): Buffer {
  return Buffer.from(tableToIPC(rowsTable(count, start), format));
}

export function ipcOf(table: Table, format: 'stream' | 'file' = 'stream'): Buffer {
  return Buffer.from(tableToIPC(table, format));
}

/** A table with one Float64 column `foo`: the wrong schema for every table here. */
export function ipcWrongSchema(): Buffer {
  return ipcOf(new Table({ foo: vectorFromArray([1.5, 2.5], new Float64()) }));
}

export function decode(buf: Buffer): Table {
  return tableFromIPC(buf);
}

export function plain(table: Table): Record<string, unknown>[] {
  return table.toArray().map((r) => {
    const o = r.toJSON() as Record<string, unknown>;
    for (const [k, v] of Object.entries(o)) if (typeof v === 'bigint') o[k] = Number(v);
    return o;
  });
}

export function tempRoot(prefix: string): { root: string; cleanup: () => void } {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Awaits a rejection and checks it is a CatalogError with the given spec code. */
export async function expectCode(promise: Promise<unknown>, code: number): Promise<CatalogError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the call to fail').toBeInstanceOf(CatalogError);
  const ce = err as CatalogError;
  expect({ code: ce.code, message: ce.message }).toMatchObject({ code });
  return ce;
}
