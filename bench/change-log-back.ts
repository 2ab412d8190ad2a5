/**
 * What reading the change log from its end costs (docs/benchmarks.md, "Change feed, newest
 * first"): requests of the object log (the AWS layout, here on the memory store) counted, not
 * timed, for the newest page of a log of N events, against reading the same newest events from
 * the oldest forward as the console did before. Usage:
 *
 *   npx tsx bench/change-log-back.ts [--events 1000,10000,100000] [--page 500]
 */
import { objectChangeLog } from '../lib/adapters/aws/object-change-log.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import { cloudEvent } from '../lib/events/cloudevent.js';
import type { ObjectStore } from '../lib/ports/object-store.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const sizes = arg('events', '1000,10000,100000').split(',').map(Number);
const PAGE = Number(arg('page', '500'));
const DAY = 86_400_000;

function counted(store: ObjectStore) {
  const calls = { list: 0, get: 0 };
  const wrapped: ObjectStore = Object.create(store);
  wrapped.list = (o) => (calls.list++, store.list(o));
  wrapped.get = (k) => (calls.get++, store.get(k));
  wrapped.putIfAbsent = (k, b) => store.putIfAbsent(k, b);
  return { store: wrapped, calls };
}

console.log(`| events in the log (over 7 days) | newest ${PAGE}, newest first: LIST / GET | the same from the oldest forward: LIST / GET | a page ${PAGE} back from the newest: LIST / GET |`);
console.log('|---|---|---|---|');
for (const n of sizes) {
  let t = Date.parse('2026-06-01T00:00:00Z');
  const { store, calls } = counted(new MemoryObjectStore());
  const log = objectChangeLog({ store, settleMs: 1000, now: () => new Date(t) });
  const step = (7 * DAY) / n;
  for (let i = 0; i < n; i++) {
    await log.append([cloudEvent('dev.rask.table.created', { project: 'p', kind: 'table', id: ['ns', `t${i}`], principal: 'x', operation: 'CreateTable', request_id: `r${i}` }, new Date(t), `e${i}`)]);
    t += step;
  }
  t += 2000;
  const reset = () => ((calls.list = 0), (calls.get = 0));
  reset();
  const back = await log.pageBack({ project: 'p', limit: PAGE });
  const backCost = `${calls.list} / ${calls.get}`;
  reset();
  const second = await log.pageBack({ project: 'p', limit: PAGE, before: back.before! });
  const secondCost = `${calls.list} / ${calls.get}`;
  if (second.events.length !== Math.min(PAGE, n - PAGE)) throw new Error('short second page');
  reset();
  let since: string | undefined;
  for (;;) {
    const page = await log.page({ project: 'p', limit: PAGE, ...(since ? { since } : {}) });
    since = page.next;
    if (!page.more) break;
  }
  console.log(`| ${n.toLocaleString('en')} | ${backCost} | ${calls.list} / ${calls.get} | ${secondCost} |`);
}
