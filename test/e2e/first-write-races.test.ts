// @covers DeclareTable, CreateTable, InsertIntoTable
/**
 * Defect 4 of issue #8: whatever writes a table's first version must be arbitrated like every
 * later commit. Real concurrency over HTTP against the local server: N writers race to write
 * the first version of one table; afterwards the table holds exactly the rows of the requests
 * that were acknowledged (200), and every other request answered a conflict code, never 200 for
 * rows that are not there and never 404 / 500 for a table that exists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipcRows } from '../data/fixtures.js';
import { ensureNamespace, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
let seq = 0;
const WRITERS = 8;
const ROWS = 7;
const ROUNDS = 3;

beforeAll(async () => {
  s = await startTestServer();
  await ensureNamespace(s, 'fw');
});
afterAll(() => s?.stop());

function nextTable(): TableApi {
  return new TableApi(s, ['fw', `t${++seq}`]);
}

/** Ids of the rows writer `w` sends: disjoint per writer, so a count tells who landed. */
const rowsOf = (w: number) => ipcRows(ROWS, w * 1000);

async function landedWriters(t: TableApi): Promise<number[]> {
  const rows = await t.rows();
  const byWriter = new Map<number, number>();
  for (const r of rows) byWriter.set(Math.floor(Number(r.id) / 1000), (byWriter.get(Math.floor(Number(r.id) / 1000)) ?? 0) + 1);
  for (const n of byWriter.values()) expect(n).toBe(ROWS); // never half a request
  expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length); // never twice
  return [...byWriter.keys()].sort((a, b) => a - b);
}

describe('first write into a declared table', () => {
  it(`${WRITERS} concurrent inserts after DeclareTable: every acknowledged row is there, no 404/500`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const t = nextTable();
      expect((await t.post('declare')).status).toBe(200);
      const answers = await Promise.all(Array.from({ length: WRITERS }, (_, w) => t.arrow('insert', rowsOf(w))));
      const statuses = answers.map((a) => a.status);
      for (const a of answers) if (a.status !== 200) expect({ status: a.status, code: a.json().code }).toEqual({ status: 409, code: 14 });
      const acked = answers.flatMap((a, w) => (a.status === 200 ? [w] : []));
      expect(acked.length, JSON.stringify(statuses)).toBeGreaterThan(0);
      expect(await landedWriters(t)).toEqual(acked);
      expect(await t.count()).toBe(acked.length * ROWS);
    }
  });
});

describe('concurrent CreateTable (mode create) on one new name', () => {
  it('exactly one winner; the others answer 409 / code 5; the winner\'s rows are the table', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const t = nextTable();
      const answers = await Promise.all(Array.from({ length: WRITERS }, (_, w) => t.arrow('create', rowsOf(w))));
      const winners = answers.flatMap((a, w) => (a.status === 200 ? [w] : []));
      for (const a of answers) if (a.status !== 200) expect({ status: a.status, code: a.json().code }, a.text).toEqual({ status: 409, code: 5 });
      expect(winners).toHaveLength(1);
      expect(await landedWriters(t)).toEqual(winners);
    }
  });
});

describe('DeclareTable × CreateTable × InsertIntoTable on one name', () => {
  it('creates land at most once, inserts land exactly when acknowledged', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const t = nextTable();
      // Writers 0–2 create, 3–4 declare, 5–7 insert (an insert before any record exists is a 404).
      const answers = await Promise.all(
        Array.from({ length: WRITERS }, (_, w) =>
          w < 3 ? t.arrow('create', rowsOf(w)) : w < 5 ? t.post('declare') : t.arrow('insert', rowsOf(w)),
        ),
      );
      const rowWriters = answers.flatMap((a, w) => (a.status === 200 && (w < 3 || w >= 5) ? [w] : []));
      for (const [w, a] of answers.entries()) {
        if (a.status === 200) continue;
        const expected = w < 3 ? [409, 5] : w < 5 ? [409, 5] : a.status === 404 ? [404, 4] : [409, 14];
        expect([a.status, a.json().code], `${w}: ${a.text}`).toEqual(expected);
      }
      expect(answers.slice(0, 3).filter((a) => a.status === 200).length).toBeLessThanOrEqual(1);
      // No table at all is possible only if no create won and every declare lost, which cannot be.
      expect(await landedWriters(t)).toEqual(rowWriters);
    }
  });
});
