// The floor of a cold data function (bench/cold-start.ts): what any Lambda that answers a query
// over a Lance table must do, and nothing else. At init it requires @lancedb/lancedb from the
// same layer on NODE_PATH (and apache-arrow with it); on each event it opens the table at
// COLD_FLOOR_TABLE (an s3:// location; the object store takes its endpoint from the same
// environment as the data function's) and either runs the same k-nearest query and answers its
// Arrow IPC file base64-encoded, as API Gateway would carry it (`{kind: 'query'}`), or reads what
// the inspection event reads: version and schema (`{kind: 'inspect'}`).
import { createRequire } from 'node:module';

const require = createRequire(`${process.env.LAMBDA_TASK_ROOT}/`);
const lancedb = require('@lancedb/lancedb');
const { tableToIPC } = require('apache-arrow');

const location = process.env.COLD_FLOOR_TABLE;
const cut = location.lastIndexOf('/');
const parent = location.slice(0, cut);
const name = location.slice(cut + 1).replace(/\.lance$/, '');
let db;

export async function handler(event) {
  db ??= lancedb.connect(parent, { storageOptions: {} });
  const table = await (await db).openTable(name);
  if (event.kind === 'inspect') {
    const [version, schema] = await Promise.all([table.version(), table.schema()]);
    return { ok: true, details: { version, fields: schema.fields.length } };
  }
  const result = await table.search(event.vector).limit(event.k).toArrow();
  return { statusCode: 200, isBase64Encoded: true, body: Buffer.from(tableToIPC(result, 'file')).toString('base64') };
}
