// temporary probe (not committed)
import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LanceDataEngine } from '../lib/data/engine.js';
import { configureLanceSession, lanceCacheUse } from '../lib/data/session.js';
import { keptHandles } from '../lib/data/table-handles.js';
import { ipcRows } from '../test/data/fixtures.js';
configureLanceSession({ indexBytes: 1 << 20, metadataBytes: 1 << 20 });
const root = mkdtempSync(path.join(tmpdir(), 'probe-'));
const e = new LanceDataEngine();
const N = Number(process.env.N ?? 1500);
const DROP = process.env.DROP !== '0';
const gc = (globalThis as any).gc as () => void;
const t0 = Date.now();
for (let i = 0; i < N; i++) {
  const loc = DROP ? path.join(root, `p${i}`, 't.lance') : path.join(root, `p${i % 40}`, 't.lance');
  if (DROP || i < 40) await e.createTable(loc, ipcRows(20), 'create');
  for (let j = 0; j < 3; j++) { await e.insert(loc, ipcRows(5, 100 + j * 5 + i * 100)); await e.countRows(loc); }
  await e.query(loc, { k: 5, vector: Array.from({ length: 8 }, () => 0.5) });
  if (DROP) rmSync(path.dirname(loc), { recursive: true, force: true });
  if (i % 150 === 149) {
    if (process.env.GC !== "0") { gc(); await new Promise((r) => setTimeout(r, 50)); gc(); }
    const m = process.memoryUsage();
    console.log(i + 1, `${((Date.now() - t0) / 1000).toFixed(0)}s`, 'rss', (m.rss / 2 ** 20).toFixed(1), 'heap', (m.heapUsed / 2 ** 20).toFixed(1), 'ext', (m.external / 2 ** 20).toFixed(1), 'lance', ((lanceCacheUse()?.bytes ?? 0) / 2 ** 20).toFixed(2), 'handles', keptHandles());
  }
}
rmSync(root, { recursive: true, force: true });
