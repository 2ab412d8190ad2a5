/**
 * `npm run bench:cold` (issue #37): cold starts of the synthesized functions, against the floor.
 *
 * Uses `cdk.out` when it holds an assembly (`--synth` synthesizes first; `npm run synth` by hand),
 * lays each function out as Lambda does (test/deploy/lambda-sandbox.ts: the asset as task root,
 * its layers under an /opt stand-in on NODE_PATH, the template's environment, AWS endpoints at the
 * loopback fake of test/support/aws-http-fake.ts), and runs every cold start in a fresh `node`
 * process (bench/cold/runner.mjs) that imports the handler and answers two events: the first call
 * and a warm one. The floor (bench/cold/floor.mjs) runs in the same Node from a task root beside
 * the data function's, with the same layer and environment: it requires @lancedb/lancedb at
 * init, opens the same table, runs the same query and answers Arrow IPC. Rounds alternate rask and
 * floor (and which goes first), so a busy machine slows both alike; each figure is the median over
 * the rounds, and the ratio's spread is given per round.
 *
 *   npm run bench:cold -- [--rounds 9] [--synth] [--only data-query,data-inspect,meta-describe,meta-describe-member]
 *       [--against OTHER_CDK_OUT] [--profile DIR] [--env KEY=VALUE]…
 *
 * `--against` runs a second build's data and metadata assets (e.g. `npm run synth` in an export
 * of another commit) in the same rounds, in the same world, with the same layers and environment
 * (only the function's own asset differs): an A/B in one run, so a busy machine slows both
 * alike. The order of rask, the other build and the floor rotates from round to round.
 *
 * Phases per cold start: node up (spawn → the runner's first line), module load (import of the
 * handler: Lambda's init), first call, warm call; start → first answer is spawn → first response;
 * CPU to first answer is the process's user + system time (all threads) until then, which other
 * processes on a busy machine move far less than the wall-clock figures.
 * S3 requests are those the fake answered from spawn to the first answer (init included).
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FixedSizeList, Field, Float32, Int64, makeData, RecordBatch, Schema, Struct, Table, tableFromIPC, tableToIPC, vectorFromArray } from 'apache-arrow';
import { readAssembly, type FunctionArtifact } from '../test/deploy/assembly.js';
import { apiEvent } from '../test/deploy/api-events.js';
import { layOutFunction, type LambdaLayout } from '../test/deploy/lambda-sandbox.js';
import { startWorld, type World } from '../test/deploy/world.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const RUNNER = path.join(HERE, 'cold', 'runner.mjs');
const FLOOR = path.join(HERE, 'cold', 'floor.mjs');
const PROFILED_RUNNER = path.join(HERE, 'cold', 'profiled-runner.mjs');

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '9' },
    synth: { type: 'boolean', default: false },
    'cdk-out': { type: 'string', default: path.join(REPO, 'cdk.out') },
    /** Another build's cdk.out, whose data and metadata assets run in the same rounds (an A/B). */
    against: { type: 'string' },
    only: { type: 'string' },
    rows: { type: 'string', default: '1000' },
    dim: { type: 'string', default: '32' },
    /**
     * Writes a V8 CPU profile of every rask cold start into this directory, taken through
     * node:inspector inside the cold process (bench/cold/profiled-runner.mjs); read one with
     * `node bench/cold/profile-summary.mjs FILE`. Profiled runs are slower: not for the figures.
     */
    profile: { type: 'string' },
    /**
     * KEY=VALUE added to this build's functions' environment only (not to `--against`'s or the
     * floor's), repeatable: e.g. `--against cdk.out --env POWERTOOLS_TRACE_ENABLED=false` runs
     * one build with tracing off against itself with tracing on, as the template deploys it.
     */
    env: { type: 'string', multiple: true, default: [] },
  },
});
const ROUNDS = Number(values.rounds);
const ROWS = Number(values.rows);
const DIM = Number(values.dim);
const CDK_OUT = path.resolve(values['cdk-out']!);

interface Marks {
  up: number;
  beforeImport: number;
  loaded: number;
  calls: { start: number; end: number; cpuMs: number; status: number; bytes: number }[];
  rssMiB: number;
}

interface Run {
  nodeUp: number;
  moduleLoad: number;
  firstCall: number;
  warmCall: number;
  toFirstAnswer: number;
  /** CPU time (user + system, all threads) from process start to the first answer. */
  cpuToFirstAnswer: number;
  s3First: number;
  rssMiB: number;
  answer?: unknown;
}

interface Scenario {
  readonly name: string;
  readonly label: string;
  readonly rask: Launch;
  readonly floor?: Launch;
  /** The same cold path on the `--against` build. */
  readonly against?: Launch;
}

interface Launch {
  readonly layout: LambdaLayout;
  readonly handler: string;
  readonly events: readonly unknown[];
  /** What a right answer looks like (a cold start that failed must not count as fast). */
  readonly check: (value: Marks) => void;
}

const s3Calls = (world: World) => world.fake.calls.filter((c) => c.action.startsWith('s3:')).length;

/** One cold start in a fresh process. */
async function coldStart(world: World, launch: Launch, scratch: string, tag = 'probe'): Promise<Run> {
  const eventsFile = path.join(scratch, `events-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(eventsFile, JSON.stringify(launch.events));
  const s3AtSpawn = s3Calls(world);
  let s3First = -1;
  const spawnAt = performance.timeOrigin + performance.now();
  // Only rask's cold starts are profiled (the floor's task root is var/floor).
  const profiled = values.profile && launch.layout.taskRoot.endsWith(path.join('var', 'task'));
  const runner = profiled ? [PROFILED_RUNNER, path.resolve(values.profile!)] : [RUNNER];
  const child = spawn(process.execPath, [...runner, launch.layout.taskRoot, launch.handler, eventsFile], {
    cwd: launch.layout.taskRoot,
    env: profiled ? { ...launch.layout.env, COLD_PROFILE_TAG: tag } : launch.layout.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let marks: Marks | undefined;
  let answer: unknown;
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    let at: number;
    while ((at = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, at);
      out = out.slice(at + 1);
      // The first call has answered (every S3 request it made has been answered by then).
      if (line === '@@CALL@@1') s3First = s3Calls(world) - s3AtSpawn;
      else if (line.startsWith('@@ANSWER@@')) answer = JSON.parse(line.slice('@@ANSWER@@'.length));
      else if (line.startsWith('@@COLD@@')) marks = JSON.parse(line.slice('@@COLD@@'.length)) as Marks;
    }
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  rmSync(eventsFile, { force: true });
  if (!marks) throw new Error(`cold start exited (${code}) without marks:\n${err.slice(-3000)}`);
  launch.check(marks);
  const [first, warm] = marks.calls;
  return {
    nodeUp: marks.up - spawnAt,
    moduleLoad: marks.loaded - marks.beforeImport,
    firstCall: first.end - first.start,
    warmCall: warm ? warm.end - warm.start : Number.NaN,
    toFirstAnswer: first.end - spawnAt,
    cpuToFirstAnswer: first.cpuMs,
    s3First,
    rssMiB: marks.rssMiB,
    answer,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const ms = (n: number) => `${Math.round(n)} ms`;

/** A 1,000-row table with a 32-d vector column, as Arrow IPC (what CreateTable takes). */
function tableRows(rows: number, dim: number): Buffer {
  const schema = new Schema([new Field('id', new Int64(), false), new Field('vector', new FixedSizeList(dim, new Field('item', new Float32(), true)), true)]);
  const ids = Array.from({ length: rows }, (_, i) => i);
  const children = [
    vectorFromArray(ids.map(BigInt), new Int64()),
    vectorFromArray(
      ids.map((i) => Array.from({ length: dim }, (_, j) => Math.sin(i * dim + j))),
      schema.fields[1].type,
    ),
  ].map((v) => v.data[0]);
  return Buffer.from(tableToIPC(new Table([new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows, nullCount: 0, children }))]), 'stream'));
}

function expectStatus(status: number, what: string) {
  return (m: Marks) => {
    for (const c of m.calls) if (c.status !== status) throw new Error(`${what} answered ${c.status}, not ${status}`);
  };
}

async function main(): Promise<void> {
  if (values.synth || !existsSync(path.join(CDK_OUT, 'manifest.json'))) {
    console.log('synthesizing (npm run synth) …');
    execFileSync('npm', ['run', 'synth'], { cwd: REPO, stdio: 'inherit' });
  }
  if (values.profile) mkdirSync(values.profile, { recursive: true });
  const world = await startWorld({ cdkOut: CDK_OUT });
  const scratch = mkdtempSync(path.join(tmpdir(), 'rask-cold-'));
  const layouts: LambdaLayout[] = [];
  try {
    const fn = (prefix: string): FunctionArtifact => {
      const found = world.assembly.functions.find((f) => f.logicalId.startsWith(prefix));
      if (!found) throw new Error(`the assembly has no ${prefix} function`);
      return found;
    };
    const call = async (operation: string, p: string, options: Parameters<typeof apiEvent>[2]) => {
      const route = world.routes.get(operation)!;
      const r = await world.invoke(route.fn, apiEvent(route.method as 'GET' | 'POST', p, options));
      if (!r.ok) throw new Error(r.error);
      const answer = r.value as { statusCode: number; body: string };
      if (answer.statusCode !== 200) throw new Error(`${operation}: ${answer.statusCode} ${answer.body}`);
      return JSON.parse(answer.body || '{}') as Record<string, unknown>;
    };
    // The table every cold start reads, written through the deployed functions themselves.
    await call('CreateNamespace', '/v1/namespace/cold/create', { json: {} });
    const created = await call('CreateTable', '/v1/table/cold%24items/create', { binary: tableRows(ROWS, DIM) });
    const location = String(created.location);
    // The set-up's warm processes are not needed any more (world.close disposes them too).
    for (const op of ['CreateNamespace', 'CreateTable']) await world.sandbox(world.routes.get(op)!.fn).dispose();

    const data = fn('FunctionsData');
    const meta = fn('FunctionsMeta');
    const layout = (f: FunctionArtifact) => {
      const l = layOutFunction(f, { endpoint: world.fake.endpoint, credentials: world.fake.principal(f.name) });
      layouts.push(l);
      return l;
    };
    const extraEnv = Object.fromEntries(
      values.env!.map((kv) => {
        const at = kv.indexOf('=');
        if (at <= 0) throw new Error(`--env takes KEY=VALUE, not ${kv}`);
        return [kv.slice(0, at), kv.slice(at + 1)];
      }),
    );
    const withEnv = (l: LambdaLayout): LambdaLayout => ({ ...l, env: { ...l.env, ...extraEnv } });
    const dataBase = layout(data);
    const dataLayout = withEnv(dataBase);
    const metaLayout = withEnv(layout(meta));
    // The other build: its asset, everything else (layers, environment, world) this build's.
    const other = values.against ? readAssembly(path.resolve(values.against)) : undefined;
    const againstLayout = (f: FunctionArtifact, prefix: string): LambdaLayout | undefined => {
      const theirs = other?.functions.find((g) => g.logicalId.startsWith(prefix));
      if (!other) return undefined;
      if (!theirs) throw new Error(`${values.against} has no ${prefix} function`);
      return layout({ ...f, assetDir: theirs.assetDir });
    };
    const dataAgainst = againstLayout(data, 'FunctionsData');
    const metaAgainst = againstLayout(meta, 'FunctionsMeta');
    // The floor: its own task root beside the data function's, the same /opt and environment.
    const floorRoot = path.join(dataLayout.root, 'var', 'floor');
    mkdirSync(floorRoot, { recursive: true });
    copyFileSync(FLOOR, path.join(floorRoot, 'index.mjs'));
    const floorLayout: LambdaLayout = {
      root: dataLayout.root,
      taskRoot: floorRoot,
      env: {
        ...dataBase.env,
        LAMBDA_TASK_ROOT: floorRoot,
        HOME: floorRoot,
        NODE_PATH: dataBase.env.NODE_PATH.replace(dataBase.taskRoot, floorRoot),
        COLD_FLOOR_TABLE: location,
      },
    };

    const vector = Array.from({ length: DIM }, (_, j) => Math.cos(j));
    const queryEvent = () => apiEvent('POST', '/v1/table/cold%24items/query', { json: { vector, k: 10 } });
    const inspectEvent = { rask: 'inspect', location, selection: {} };
    const memberDescribe = () =>
      apiEvent('POST', '/v1/table/cold%24items/describe', { json: {}, authorizer: { principal: 'member', platformAdmin: 'false', via: 'api-key', principalId: 'member' } });
    const okInspect = (m: Marks) => {
      for (const c of m.calls) if (c.status !== 200) throw new Error('the inspection failed');
    };
    const scenarios: Scenario[] = [
      {
        name: 'data-query',
        label: `data: QueryTable k=10 on a ${ROWS.toLocaleString('en')}-row ${DIM}-d table`,
        rask: { layout: dataLayout, handler: data.handler, events: [queryEvent(), queryEvent()], check: expectStatus(200, 'QueryTable') },
        against: dataAgainst && { layout: dataAgainst, handler: data.handler, events: [queryEvent(), queryEvent()], check: expectStatus(200, 'QueryTable (--against)') },
        floor: { layout: floorLayout, handler: 'index.handler', events: [{ kind: 'query', vector, k: 10 }, { kind: 'query', vector, k: 10 }], check: expectStatus(200, 'the floor') },
      },
      {
        name: 'data-inspect',
        label: 'data: the inspection event DescribeTable sends',
        rask: { layout: dataLayout, handler: data.handler, events: [inspectEvent, inspectEvent], check: okInspect },
        against: dataAgainst && { layout: dataAgainst, handler: data.handler, events: [inspectEvent, inspectEvent], check: okInspect },
        floor: { layout: floorLayout, handler: 'index.handler', events: [{ kind: 'inspect' }, { kind: 'inspect' }], check: okInspect },
      },
      {
        name: 'meta-describe',
        label: 'meta: DescribeTable',
        rask: {
          layout: metaLayout,
          handler: meta.handler,
          events: [apiEvent('POST', '/v1/table/cold%24items/describe', { json: {} }), apiEvent('POST', '/v1/table/cold%24items/describe', { json: {} })],
          check: expectStatus(200, 'DescribeTable'),
        },
        against: metaAgainst && {
          layout: metaAgainst,
          handler: meta.handler,
          events: [apiEvent('POST', '/v1/table/cold%24items/describe', { json: {} }), apiEvent('POST', '/v1/table/cold%24items/describe', { json: {} })],
          check: expectStatus(200, 'DescribeTable (--against)'),
        },
      },
      {
        // A principal that is not a platform administrator and holds no grant: the policy engine
        // decides (and denies, 403), so this cold path pays for the engine where the admin's does not.
        name: 'meta-describe-member',
        label: 'meta: DescribeTable by a member (engine decides: 403)',
        rask: {
          layout: metaLayout,
          handler: meta.handler,
          events: [memberDescribe(), memberDescribe()],
          check: expectStatus(403, 'DescribeTable by a member'),
        },
        against: metaAgainst && {
          layout: metaAgainst,
          handler: meta.handler,
          events: [memberDescribe(), memberDescribe()],
          check: expectStatus(403, 'DescribeTable by a member (--against)'),
        },
      },
    ].filter((s) => !values.only || values.only.split(',').includes(s.name));

    // One answer checked up front: the rask and floor queries return the same rows.
    const probe = async (launch: Launch) => {
      const answer = (await coldStart(world, { ...launch, layout: { ...launch.layout, env: { ...launch.layout.env, COLD_PRINT_ANSWER: '1' } } }, scratch)).answer as { body: string };
      const t = tableFromIPC(Buffer.from(answer.body, 'base64'));
      return [...t.getChild('id')!.toArray()].map(Number);
    };
    const queryScenario = scenarios.find((s) => s.name === 'data-query');
    if (queryScenario?.floor) {
      const [a, b] = [await probe(queryScenario.rask), await probe(queryScenario.floor)];
      if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`rask and the floor answer different rows: ${a} vs ${b}`);
      console.log(`same answer from rask and the floor: ids ${a.join(', ')}`);
    }

    console.log(`node ${process.version}; ${ROUNDS} alternating rounds; each run a fresh process`);
    type Who = 'rask' | 'floor' | 'against';
    const results = new Map<string, Record<Who, Run[]>>(scenarios.map((s) => [s.name, { rask: [], floor: [], against: [] }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of scenarios) {
        const r = results.get(s.name)!;
        // Who goes first rotates from round to round.
        const present = (['rask', 'floor', 'against'] as const).filter((w) => s[w]);
        const order = present.map((_, i) => present[(i + round) % present.length]);
        for (const who of order) r[who].push(await coldStart(world, s[who]!, scratch, `${s.name}-${who}-${round + 1}`));
      }
      process.stdout.write(`round ${round + 1}/${ROUNDS}\r`);
    }
    console.log('');
    console.log('| cold path | who | node up | module load | first call | warm call | start → first answer | CPU to first answer | S3 requests to first answer | RSS | ratio (per round: min–max) |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const s of scenarios) {
      const r = results.get(s.name)!;
      const row = (who: string, runs: Run[], ratio = '') =>
        console.log(
          `| ${s.label} | ${who} | ${ms(median(runs.map((x) => x.nodeUp)))} | ${ms(median(runs.map((x) => x.moduleLoad)))} | ${ms(median(runs.map((x) => x.firstCall)))} | ${ms(median(runs.map((x) => x.warmCall)))} | **${ms(median(runs.map((x) => x.toFirstAnswer)))}** | ${ms(median(runs.map((x) => x.cpuToFirstAnswer)))} | ${median(runs.map((x) => x.s3First))} | ${Math.round(median(runs.map((x) => x.rssMiB)))} MiB | ${ratio} |`,
        );
      const ratioTo = (runs: Run[], base: Run[]) => {
        const ratios = runs.map((x, i) => x.toFirstAnswer / base[i].toFirstAnswer);
        return `**${(median(runs.map((x) => x.toFirstAnswer)) / median(base.map((x) => x.toFirstAnswer))).toFixed(2)}×** (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`;
      };
      row('rask', r.rask, r.floor.length ? ratioTo(r.rask, r.floor) : '');
      if (r.against.length) row('--against', r.against, r.floor.length ? ratioTo(r.against, r.floor) : '');
      if (r.floor.length) row('floor', r.floor);
      const spread = (who: string, runs: Run[]) =>
        console.log(`|  | ${who} start → first answer, all rounds sorted: ${runs.map((x) => Math.round(x.toFirstAnswer)).sort((a, b) => a - b).join(', ')} ms |||||||||`);
      spread('rask', r.rask);
      if (r.against.length) {
        spread('--against', r.against);
        const cpu = (runs: Run[]) => runs.map((x) => Math.round(x.cpuToFirstAnswer)).sort((a, b) => a - b).join(', ');
        console.log(`|  | CPU to first answer, all rounds sorted: rask ${cpu(r.rask)} ms; --against ${cpu(r.against)} ms |||||||||`);
        const cpuRatio = (median(r.rask.map((x) => x.cpuToFirstAnswer)) / median(r.against.map((x) => x.cpuToFirstAnswer))).toFixed(2);
        console.log(`|  | rask / --against: start → first answer ${ratioTo(r.rask, r.against)}; CPU to first answer **${cpuRatio}×**; module load ${ms(median(r.rask.map((x) => x.moduleLoad)))} vs ${ms(median(r.against.map((x) => x.moduleLoad)))} |||||||||`);
      }
    }
  } finally {
    for (const l of layouts) rmSync(l.root, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
    await world.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
