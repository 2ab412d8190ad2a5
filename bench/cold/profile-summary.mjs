// Reads a CPU profile written by bench/cold/profiled-runner.mjs and prints where a cold start's
// CPU went: self time by function and by source (a bundle's frames are mapped back to their
// original files through the `.map` beside the bundle, so `node_modules/@aws-sdk/...` and
// `lib/...` show up instead of one `index.mjs`), and inclusive time by source (a sample counts
// once for every source on its stack: what loading and running that package cost).
//   node bench/cold/profile-summary.mjs FILE.cpuprofile [--top 25] [--phase init|first-call|warm-call]
// --phase keeps the samples taken during that phase of the runner (module load; the first
// event; the second), placed by the marks bench/cold/profiled-runner.mjs stores with the profile.
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

const file = process.argv[2];
const top = Number(process.argv[process.argv.indexOf('--top') + 1] || 25) || 25;
const phase = process.argv.includes('--phase') ? process.argv[process.argv.indexOf('--phase') + 1] : undefined;
const profile = JSON.parse(readFileSync(file, 'utf8'));
/** The phase's window in the profiler's clock (µs), from the runner's marks. */
const window = (() => {
  if (!phase) return undefined;
  const { marks, clockOffsetUs } = profile;
  if (!marks) throw new Error(`${file} holds no marks (taken before profiled-runner.mjs stored them)`);
  const span = { init: [marks.beforeImport, marks.loaded], 'first-call': [marks.calls[0].start, marks.calls[0].end], 'warm-call': [marks.calls[1]?.start, marks.calls[1]?.end] }[phase];
  if (!span || span.some((t) => t === undefined)) throw new Error(`unknown or absent phase ${phase}`);
  return span.map((ms) => ms * 1000 + clockOffsetUs);
})();
const maps = new Map();
const mapFor = (url) => {
  if (!url.startsWith('file://')) return undefined;
  if (!maps.has(url)) {
    const p = `${fileURLToPath(url)}.map`;
    const payload = profile.sourceMaps?.[url] ?? (existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')) : undefined);
    maps.set(url, payload ? new SourceMap(payload) : undefined);
  }
  return maps.get(url);
};
/** A source's bucket: the package for node_modules, else the repository path. */
const bucket = (src) => {
  const at = src.lastIndexOf('node_modules/');
  if (at >= 0) {
    const rest = src.slice(at + 'node_modules/'.length).split('/');
    return `pkg ${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  return src.replace(/^(\.\.\/)+/, '');
};
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const where = new Map();
const locate = (n) => {
  if (where.has(n.id)) return where.get(n.id);
  const f = n.callFrame;
  let src = f.url || f.functionName || '(native)';
  const map = mapFor(f.url);
  if (map) {
    const e = map.findEntry(f.lineNumber, f.columnNumber);
    if (e?.originalSource) src = e.originalSource;
  } else if (f.url.startsWith('node:') || !f.url.includes('/')) {
    src = f.url ? `node ${f.url}` : `(${f.functionName || 'native'})`;
  }
  const w = { fn: `${f.functionName || '(anonymous)'} ${bucket(src)}`, src: bucket(src) };
  where.set(n.id, w);
  return w;
};
// Each sample weighs the median interval, not its own delta: on a busy machine one delta can
// hold tens of milliseconds the process spent descheduled, which says nothing about the frame.
const dt = profile.timeDeltas;
const weight = [...dt].sort((a, b) => a - b)[dt.length >> 1] / 1000;
const self = new Map();
const selfSrc = new Map();
const incl = new Map();
let total = 0;
let at = profile.startTime;
let kept = 0;
for (let i = 0; i < profile.samples.length; i++) {
  at += dt[i];
  if (window && (at < window[0] || at > window[1])) continue;
  kept++;
  const ms = weight;
  total += ms;
  const n = nodes.get(profile.samples[i]);
  const w = locate(n);
  self.set(w.fn, (self.get(w.fn) ?? 0) + ms);
  selfSrc.set(w.src, (selfSrc.get(w.src) ?? 0) + ms);
  const seen = new Set();
  for (let id = n.id; id !== undefined; id = parent.get(id)) {
    const s = locate(nodes.get(id)).src;
    if (!seen.has(s)) {
      seen.add(s);
      incl.set(s, (incl.get(s) ?? 0) + ms);
    }
  }
}
const print = (title, m) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${v.toFixed(1).padStart(8)} ms ${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
};
console.log(`${file}${phase ? ` (${phase} only)` : ''}: ${kept} samples of ${weight.toFixed(3)} ms (the median interval): ${total.toFixed(0)} ms of CPU; wall ${((profile.endTime - profile.startTime) / 1000).toFixed(0)} ms`);
print('self time by function', self);
print('self time by source', selfSrc);
print('inclusive time by source', incl);
