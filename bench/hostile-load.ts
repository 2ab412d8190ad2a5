/**
 * Hostile load on the local server (issue 28, acceptance): one client sends 10× its rate limit
 * for 30 s while another client, well inside its own limit, keeps its pace. The quiet client's
 * p99 latency must stay within 2× of its p99 without the noisy one, and it must see no 429.
 * Bounded and loopback only: the server is a child process on 127.0.0.1 with a throw-away data
 * directory; each client has its own keep-alive connection pool.
 *
 *   npm run bench:hostile [-- --seconds 30 --limit 50 --quiet-rps 10 --warmup 10]
 *
 * Figures go in docs/benchmarks.md ("Hostile load"); the machine they ran on is shared, so the
 * load average at the start and end is printed with them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '10' },
    limit: { type: 'string', default: '50' },
    'quiet-rps': { type: 'string', default: '10' },
  },
});
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const LIMIT = Number(values.limit);
const QUIET_RPS = Number(values['quiet-rps']);
const NOISY_RPS = 10 * LIMIT;
const ADMIN = 'hostile-load-admin-key-0123456789abcdef';

function startServer(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const file = fileURLToPath(new URL('./hostile-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', file, dir, ADMIN, String(LIMIT), String(2 * LIMIT)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening`)));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening (\S+)/.exec(out);
      if (m) resolve({ url: m[1], child });
    });
  });
}

interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly body: string;
}

/** One client: its own keep-alive pool, so the noisy client's sockets never carry the quiet one's requests. */
function client(url: string, key: string, maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const base = new URL(url);
  return {
    agent,
    send(method: string, p: string, body?: unknown): Promise<Answer> {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const start = performance.now();
      return new Promise((resolve, reject) => {
        const req = http.request(
          {
            agent,
            host: base.hostname,
            port: base.port,
            method,
            path: p,
            headers: { 'x-api-key': key, ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start, body: Buffer.concat(chunks).toString() }));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    },
  };
}

const pct = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends at `rps`, open loop (a slow answer does not slow the pace), for `seconds`; at most `inFlight` at once. */
async function paced(send: () => Promise<Answer>, rps: number, seconds: number, inFlight: number) {
  const answers: Answer[] = [];
  let dropped = 0;
  let pending = 0;
  const waits: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; ; i++) {
    const due = start + (i * 1000) / rps;
    if (due - start >= seconds * 1000) break;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    if (pending >= inFlight) {
      dropped++;
      continue;
    }
    pending++;
    waits.push(
      send().then(
        (a) => {
          pending--;
          answers.push(a);
        },
        () => {
          pending--;
          answers.push({ status: 0, ms: 0, body: '' });
        },
      ),
    );
  }
  await Promise.all(waits);
  return { answers, dropped, seconds: (performance.now() - start) / 1000 };
}

function summary(answers: readonly Answer[]) {
  const ok = answers.filter((a) => a.status === 200).map((a) => a.ms).sort((a, b) => a - b);
  return {
    requests: answers.length,
    ok: ok.length,
    throttled: answers.filter((a) => a.status === 429).length,
    other: answers.filter((a) => a.status !== 200 && a.status !== 429).length,
    ...(answers.some((a) => a.status !== 200 && a.status !== 429) ? { firstOther: answers.find((a) => a.status !== 200 && a.status !== 429)!.body.slice(0, 200) } : {}),
    p50: ok.length ? pct(ok, 50) : Number.NaN,
    p99: ok.length ? pct(ok, 99) : Number.NaN,
  };
}

const dir = await mkdtemp(path.join(tmpdir(), 'rask-hostile-'));
const { url, child } = await startServer(dir);
try {
  const admin = client(url, ADMIN, 4);
  const must = async (p: Promise<Answer>) => {
    const a = await p;
    if (a.status !== 200) throw new Error(`setup: ${a.status} ${a.body}`);
    return JSON.parse(a.body);
  };
  const keys: Record<string, string> = {};
  // One project both clients write in: the per-principal limit is what separates them.
  await must(admin.send('POST', '/v1/projects', { name: 'bench' }));
  await must(admin.send('POST', '/v1/warehouses', { name: 'main', project: 'bench', storage_root: path.join(dir, 'projects', 'bench', 'main') }));
  for (const who of ['noisy', 'quiet']) {
    await must(admin.send('POST', '/v1/principals', { name: who }));
    await must(admin.send('POST', '/v1/grants', { principal: who, role: 'writer', project: 'bench' }));
    keys[who] = (await must(admin.send('POST', `/v1/principals/${who}/keys`, {}))).api_key;
  }
  await must(admin.send('POST', '/projects/bench/v1/namespace/ns/create', {}));
  admin.agent.destroy();

  const quiet = client(url, keys.quiet, 8);
  const noisy = client(url, keys.noisy, 64);
  // The quiet client's request: a namespace read (guard, project record, registry read), well under its limit.
  const quietCall = () => quiet.send('POST', '/projects/bench/v1/namespace/ns/describe', {});
  const noisyCall = () => noisy.send('POST', '/projects/bench/v1/namespace/ns/describe', {});

  const loadStart = loadavg()[0];
  await paced(quietCall, QUIET_RPS, WARMUP, 8);
  const alone = await paced(quietCall, QUIET_RPS, SECONDS, 8);
  const [loaded, flood] = await Promise.all([paced(quietCall, QUIET_RPS, SECONDS, 8), paced(noisyCall, NOISY_RPS, SECONDS, 64)]);
  const loadEnd = loadavg()[0];

  const a = summary(alone.answers);
  const b = summary(loaded.answers);
  const f = summary(flood.answers);
  const ratio = b.p99 / a.p99;
  const pass = ratio <= 2 && b.throttled === 0 && b.other === 0 && a.throttled === 0;
  const r = (x: number) => Math.round(x * 100) / 100;
  console.log(
    JSON.stringify(
      {
        limitPerSecond: LIMIT,
        burst: 2 * LIMIT,
        seconds: SECONDS,
        quietRps: QUIET_RPS,
        noisyTargetRps: NOISY_RPS,
        loadAverage: { start: r(loadStart), end: r(loadEnd) },
        quietAlone: { ...a, p50: r(a.p50), p99: r(a.p99) },
        quietUnderFlood: { ...b, p50: r(b.p50), p99: r(b.p99) },
        noisy: { ...f, p50: r(f.p50), p99: r(f.p99), sentPerSecond: r(f.requests / flood.seconds), notSentInFlightCap: flood.dropped, admittedPerSecond: r(f.ok / flood.seconds) },
        p99Ratio: r(ratio),
        criterion: 'quiet p99 under flood <= 2x its p99 alone, and no 429 for it',
        pass,
      },
      null,
      2,
    ),
  );
  quiet.agent.destroy();
  noisy.agent.destroy();
  if (!pass) process.exitCode = 1;
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await rm(dir, { recursive: true, force: true });
}
