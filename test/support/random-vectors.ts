/**
 * A table of `rows` random `dim`-d float32 vectors (`vec`, uniform in [-1, 1)) with an int64
 * `id` column, as an Arrow IPC stream: the body of a create or insert. The index-build bench
 * (bench/index-builds.ts) and the task-kill crash test (test/crash/job-task-kill.test.ts) build
 * their tables from it; `firstId` lets successive inserts carry distinct ids.
 */
import { FixedSizeList, Field, Float32, Int64, makeData, RecordBatch, Schema, Struct, Table, tableToIPC, vectorFromArray } from 'apache-arrow';

export function randomVectorsIpc(rows: number, dim: number, firstId = 0): Buffer {
  const vecType = new FixedSizeList(dim, new Field('item', new Float32(), true));
  const schema = new Schema([new Field('id', new Int64(), false), new Field('vec', vecType, true)]);
  const values = new Float32Array(rows * dim);
  for (let i = 0; i < values.length; i++) values[i] = Math.random() * 2 - 1;
  const flat = makeData({ type: new Float32(), length: values.length, data: values });
  const vec = makeData({ type: vecType, length: rows, nullCount: 0, child: flat });
  const ids = vectorFromArray(Array.from({ length: rows }, (_, i) => BigInt(firstId + i)), new Int64()).data[0];
  const struct = makeData({ type: new Struct(schema.fields), length: rows, nullCount: 0, children: [ids, vec] });
  return Buffer.from(tableToIPC(new Table([new RecordBatch(schema, struct)]), 'stream'));
}
