/**
 * Measures the metadata Lambda bundle: builds functions/api-meta.ts with exactly the stack's
 * esbuild options, prints its size (raw and gzip, close to the deployed zip), checks that its
 * module graph holds no @lancedb/lancedb or apache-arrow, and times the cold import of the
 * bundled handler in fresh node processes.
 *
 *   npx tsx infra/measure-bundle.ts [--runs 10] [--kind meta|data|authorizer] [--compare-runtime-sdk]
 *
 * `--compare-runtime-sdk` also measures the alternative of leaving @aws-sdk/* to the Lambda
 * runtime (the choice infra/bundling.ts explains against), imported from node_modules here.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { REPO_ROOT, esbuildOptions, type BundleKind } from './bundling.js';

const FORBIDDEN = [/node_modules\/@lancedb\//, /node_modules\/apache-arrow\//];

interface Args {
  runs: number;
  kind: BundleKind;
  compareRuntimeSdk: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { runs: 10, kind: 'meta', compareRuntimeSdk: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--runs') args.runs = Number(argv[++i]);
    else if (argv[i] === '--kind') args.kind = argv[++i] as BundleKind;
    else if (argv[i] === '--compare-runtime-sdk') args.compareRuntimeSdk = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!Number.isInteger(args.runs) || args.runs < 1) throw new Error('--runs must be a positive integer');
  return args;
}

/** Where bundles are written: inside the repo so that externals resolve from its node_modules. */
const OUT_DIR = path.join(REPO_ROOT, 'node_modules', '.cache', 'rask-measure');

export async function bundle(kind: BundleKind, extraExternal: string[] = [], suffix = '') {
  mkdirSync(OUT_DIR, { recursive: true });
  const options = esbuildOptions(kind);
  const outfile = path.join(OUT_DIR, `${kind}${suffix}.mjs`);
  const { outExtension: _ignored, ...rest } = options;
  const result = await build({
    ...rest,
    external: [...options.external, ...extraExternal],
    outfile,
    metafile: true,
    logLevel: 'silent',
  });
  return { outfile, metafile: result.metafile as Metafile };
}

export function forbiddenInputs(metafile: Metafile): string[] {
  return Object.keys(metafile.inputs).filter((input) => FORBIDDEN.some((re) => re.test(input)));
}

/** One fresh node process per run; the time covers `import()` of the bundle only. */
function coldImportMs(file: string, runs: number, withEngine = false): number[] {
  // `withEngine`: also load the Cedar policy engine, as the first authorized request does.
  const engine = withEngine ? ` await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js')).href)});` : '';
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)});${engine} process.stdout.write(String(performance.now() - t));`;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      // No RASK_* settings: importing must not need configuration (it is read on first request).
      env: { PATH: process.env.PATH ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    times.push(Number(out));
  }
  return times;
}

function stats(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const median = sorted[Math.floor(sorted.length / 2)];
  return { mean, median, min: sorted[0], max: sorted[sorted.length - 1] };
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const ms = (n: number) => `${n.toFixed(1)} ms`;

/** Output bytes per package (our own code counts as "(rask)"), largest first. */
function contributors(metafile: Metafile, top = 5): string {
  const bytes = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const name = m ? m[1] : '(rask)';
      bytes.set(name, (bytes.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...bytes.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, n]) => `${name} ${kb(n)}`)
    .join(', ');
}

function report(label: string, outfile: string, metafile: Metafile, runs: number, withEngine = false): boolean {
  const raw = statSync(outfile).size;
  const gz = gzipSync(readFileSync(outfile), { level: 9 }).length;
  const bad = forbiddenInputs(metafile);
  const t = stats(coldImportMs(outfile, runs));
  console.log(`${label}`);
  console.log(`  bundle:        ${kb(raw)} (${raw} bytes), gzip ${kb(gz)}`);
  console.log(`  inputs:        ${Object.keys(metafile.inputs).length} modules; LanceDB/Arrow inputs: ${bad.length ? bad.join(', ') : 'none'}`);
  console.log(`  largest:       ${contributors(metafile)}`);
  console.log(`  cold import:   mean ${ms(t.mean)}, median ${ms(t.median)}, min ${ms(t.min)}, max ${ms(t.max)} over ${runs} fresh node processes`);
  if (withEngine) {
    const e = stats(coldImportMs(outfile, runs, true));
    console.log(`  + policy engine: mean ${ms(e.mean)}, median ${ms(e.median)}, min ${ms(e.min)}, max ${ms(e.max)} (import of the bundle, then of cedar-wasm, as on the first authorization)`);
  }
  return bad.length === 0;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  console.log(`node ${process.version} on ${process.platform}/${process.arch}`);
  const main = await bundle(args.kind);
  let ok = report(`${args.kind} bundle (stack settings)`, main.outfile, main.metafile, args.runs, args.kind !== 'authorizer');
  if (args.compareRuntimeSdk) {
    const alt = await bundle(args.kind, ['@aws-sdk/*'], '-runtime-sdk');
    ok = report(`${args.kind} bundle with @aws-sdk/* external (runtime SDK; not used)`, alt.outfile, alt.metafile, args.runs) && ok;
  }
  if (args.kind === 'meta' && !ok) {
    console.error('FAIL: the metadata bundle must not contain @lancedb/lancedb or apache-arrow');
    process.exitCode = 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
