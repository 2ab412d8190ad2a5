/**
 * Drives one data-plane server already running (bench/rask-server.ts or bench/bare-lance-server.ts)
 * with the requests bench/data-plane.ts sends, so the server can be profiled on its own, e.g.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/rask-server.ts /tmp/d   # prints its URL
 *   npx tsx bench/data-plane-drive.ts <url> create 40      # or: insert 200, query 200
 *
 * then stop the server with SIGTERM (the profile is written as it exits). Prints ms per request.
 */
import { tableToIPC } from 'apache-arrow';
import { post, rows, vectorOf } from './data-plane.js';

const [base, op = 'create', count = '30'] = process.argv.slice(2);
if (!base || !['create', 'insert', 'query'].includes(op)) throw new Error('usage: data-plane-drive.ts <url> create|insert|query [count]');
const n = Number(count);
const url = (name: string, o: string) => `${base}/v1/table/bench%24${name}/${o}?delimiter=%24`;
const big = Buffer.from(tableToIPC(rows(10_000), 'stream'));
const hundreds = Array.from({ length: n }, (_, i) => Buffer.from(tableToIPC(rows(100, 10_000 + i * 100), 'stream')));
const queryBody = Buffer.from(JSON.stringify({ vector: vectorOf(42), k: 10 }));
const ok = (r: { status: number; body: Buffer }) => {
  if (r.status !== 200) throw new Error(`${r.status}: ${r.body.toString().slice(0, 200)}`);
};
// A second run against the same server finds the namespace there already (409 from rask).
const ns = await post(`${base}/v1/namespace/bench/create`, Buffer.from('{}'), true);
if (ns.status !== 409) ok(ns);
// The insert and query target; a second run against the same server finds it there already.
const target = await post(url('c0', 'create'), big);
if (!/exist/i.test(target.body.toString())) ok(target);
const run = Date.now().toString(36);
const started = performance.now();
for (let i = 0; i < n; i++) {
  if (op === 'create') ok(await post(url(`d${run}n${i}`, 'create'), big));
  else if (op === 'insert') ok(await post(url('c0', 'insert'), hundreds[i]));
  else ok(await post(url('c0', 'query'), queryBody, true));
}
console.log(`${op}: ${((performance.now() - started) / n).toFixed(2)} ms per request over ${n}`);
