/**
 * Measures a Lambda asset exactly as the stack deploys it: builds it with `bundleFunction`
 * (infra/bundling.ts, the function constructs/rask-function.ts runs at synth), prints the entry's
 * size (what a cold start loads) and the whole asset's, checks that its module graph holds no
 * @lancedb/lancedb or apache-arrow (metadata bundle), and times the cold import of the entry in
 * fresh node processes.
 *
 *   npx tsx infra/measure-bundle.ts [--runs 10] [--kind meta|data|authorizer|…]
 *       [--compare-unsplit] [--against <file.mjs>]… [--operation <OperationId>]… [--compare-runtime-sdk]
 *
 * Every variant is timed in alternation (run 1 of each, then run 2 of each, …), so a busy
 * machine slows them alike and the ratios stay comparable:
 * - `--compare-unsplit`: the same entry bundled as one file (the NodejsFunction-era layout);
 * - `--against <file>`: any earlier bundle file (e.g. one built from another commit);
 * - `--operation <id>`: that operation's asset in `rask:functionMode=per-operation`
 *   (infra/operation-bundles.ts), with its sizes;
 * - `--compare-runtime-sdk`: @aws-sdk/* left to the Lambda runtime (the choice infra/bundling.ts
 *   explains against), imported from node_modules here.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { ALL_OPERATIONS } from '../lib/contract/operations.js';
import { REPO_ROOT, bundleFunction, esbuildOptions } from './bundling.js';
import type { BundleKind } from './bundle-kinds.js';
import { bundleOperations } from './operation-bundles.js';

const FORBIDDEN = [/node_modules\/@lancedb\//, /node_modules\/apache-arrow\//];

interface Args {
  runs: number;
  kind: BundleKind;
  compareUnsplit: boolean;
  compareRuntimeSdk: boolean;
  against: string[];
  operations: string[];
}

function parseArgs(argv: string[]): Args {
  const args: Args = { runs: 10, kind: 'meta', compareUnsplit: false, compareRuntimeSdk: false, against: [], operations: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--runs') args.runs = Number(argv[++i]);
    else if (argv[i] === '--kind') args.kind = argv[++i] as BundleKind;
    else if (argv[i] === '--compare-unsplit') args.compareUnsplit = true;
    else if (argv[i] === '--compare-runtime-sdk') args.compareRuntimeSdk = true;
    else if (argv[i] === '--against') args.against.push(path.resolve(argv[++i]));
    else if (argv[i] === '--operation') args.operations.push(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!Number.isInteger(args.runs) || args.runs < 1) throw new Error('--runs must be a positive integer');
  return args;
}

/** The deployed asset, in a fresh temporary directory (its installed modules resolve from inside it, as on Lambda). */
export function bundle(kind: BundleKind): { outdir: string; entry: string; metafile: Metafile } {
  const outdir = mkdtempSync(path.join(tmpdir(), `rask-measure-${kind}-`));
  const { metafile } = bundleFunction(kind, outdir);
  return { outdir, entry: path.join(outdir, 'index.mjs'), metafile };
}

/**
 * The same entry as one file with no splitting (what NodejsFunction deployed). Written inside the
 * repository so that its externals resolve from node_modules.
 */
async function unsplitBundle(kind: BundleKind, extraExternal: string[], name: string): Promise<{ entry: string; metafile: Metafile }> {
  const { splitting: _s, entryNames: _e, chunkNames: _c, outdir: _o, outExtension: _x, ...options } = esbuildOptions(kind, '');
  const entry = path.join(mkdtempSync(path.join(REPO_ROOT, 'node_modules', '.cache', `rask-measure-${name}-`)), `${kind}.mjs`);
  const result = await build({ ...options, external: [...options.external, ...extraExternal], outfile: entry, metafile: true, logLevel: 'silent' });
  return { entry, metafile: result.metafile };
}

export function forbiddenInputs(metafile: Metafile): string[] {
  return Object.keys(metafile.inputs).filter((input) => FORBIDDEN.some((re) => re.test(input)));
}

/** One fresh node process; the time covers `import()` of `files` in order (and of the policy engine with `engine`). */
function coldImportMs(files: readonly string[], engine?: string): number {
  const imports = [...files, ...(engine ? [engine] : [])].map((f) => `await import(${JSON.stringify(pathToFileURL(f).href)});`).join(' ');
  const script = `const t = performance.now(); ${imports} process.stdout.write(String(performance.now() - t));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    // No RASK_* settings: importing must not need configuration (it is read on first request).
    env: { PATH: process.env.PATH ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  return Number(out);
}

function stats(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const median = sorted[Math.floor(sorted.length / 2)];
  return { mean, median, min: sorted[0], max: sorted[sorted.length - 1] };
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const ms = (n: number) => `${n.toFixed(1)} ms`;

/** Output bytes per package (our own code counts as "(rask)"), largest first, for the outputs matching `only`. */
function contributors(metafile: Metafile, only: (output: string) => boolean, top = 5): string {
  const bytes = new Map<string, number>();
  for (const [name, output] of Object.entries(metafile.outputs)) {
    if (!only(name)) continue;
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const pkg = m ? m[1] : '(rask)';
      bytes.set(pkg, (bytes.get(pkg) ?? 0) + bytesInOutput);
    }
  }
  return [...bytes.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, n]) => `${name} ${kb(n)}`)
    .join(', ');
}

/** The entry plus the chunks it imports statically (transitively): what `import()` of the entry loads. */
export function staticClosure(metafile: Metafile, entry: string): string[] {
  const key = (abs: string) => path.relative(REPO_ROOT, abs).split(path.sep).join('/');
  const byKey = new Map(Object.keys(metafile.outputs).map((k) => [k, k]));
  const seen = new Set<string>();
  const visit = (k: string) => {
    if (seen.has(k) || !byKey.has(k)) return;
    seen.add(k);
    for (const i of metafile.outputs[k].imports) if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  visit(key(entry));
  return [...seen];
}

/** Prints an asset's sizes (entry, what a cold start loads, everything) and largest parts; returns its forbidden inputs. */
function describeAsset(label: string, entry: string, metafile: Metafile): string[] {
  // Source maps are beside the code, never loaded.
  const outputs = Object.keys(metafile.outputs).filter((o) => !o.endsWith('.map'));
  const eager = staticClosure(metafile, entry);
  const size = (rel: string) => statSync(path.join(REPO_ROOT, rel)).size;
  const eagerBytes = eager.reduce((n, o) => n + size(o), 0);
  const allBytes = outputs.reduce((n, o) => n + size(o), 0);
  const bad = forbiddenInputs(metafile);
  console.log(label);
  console.log(`  entry:         ${kb(statSync(entry).size)} (${path.basename(entry)}), gzip ${kb(gzipSync(readFileSync(entry), { level: 9 }).length)}`);
  console.log(`  cold start loads: ${kb(eagerBytes)} in ${eager.length} file(s); all JavaScript: ${kb(allBytes)} in ${outputs.length} files`);
  console.log(`  inputs:        ${Object.keys(metafile.inputs).length} modules; LanceDB/Arrow inputs: ${bad.length ? bad.join(', ') : 'none'}`);
  console.log(`  largest (loaded at cold start): ${contributors(metafile, (o) => eager.includes(o))}`);
  console.log(`  largest (lazy chunks):          ${contributors(metafile, (o) => !eager.includes(o))}`);
  return bad;
}

interface Variant {
  label: string;
  files: string[];
  engine?: string;
  times: number[];
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  console.log(`node ${process.version} on ${process.platform}/${process.arch}`);
  const deployed = bundle(args.kind);
  const bad = describeAsset(`${args.kind} asset (stack settings: bundleFunction, split) in ${deployed.outdir}`, deployed.entry, deployed.metafile);

  const chunks = readdirSync(path.join(deployed.outdir, 'chunks')).filter((f) => f.endsWith('.mjs')).map((f) => path.join(deployed.outdir, 'chunks', f));
  const engineFile = path.join(deployed.outdir, 'node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js');
  const withEngine = args.kind === 'meta' || args.kind === 'data';
  const variants: Variant[] = [{ label: 'deployed entry (split)', files: [deployed.entry], times: [] }];
  if (withEngine) variants.push({ label: '  + policy engine (first authorization)', files: [deployed.entry], engine: engineFile, times: [] });
  variants.push({ label: '  + every lazy chunk (upper bound: all paths used)', files: [deployed.entry, ...chunks], times: [] });
  // Per-operation mode: one shared asset per bundle, an entry per operation (infra/operation-bundles.ts).
  const shared = new Map<string, { outdir: string; metafile: Metafile }>();
  for (const id of args.operations) {
    const operation = ALL_OPERATIONS.find((o) => o.operationId === id);
    if (!operation) throw new Error(`unknown operation ${id}`);
    let asset = shared.get(operation.bundle);
    if (!asset) {
      const outdir = mkdtempSync(path.join(tmpdir(), `rask-measure-operations-${operation.bundle}-`));
      asset = { outdir, ...bundleOperations(operation.bundle, outdir) };
      shared.set(operation.bundle, asset);
    }
    const entry = path.join(asset.outdir, `${id}.mjs`);
    describeAsset(`${id} entry (per-operation mode, shared ${operation.bundle} asset)`, entry, asset.metafile);
    variants.push({ label: `operation ${id} (per-operation mode)`, files: [entry], times: [] });
  }
  if (args.compareUnsplit) {
    const one = await unsplitBundle(args.kind, [], 'unsplit');
    console.log(`unsplit (one file): ${kb(statSync(one.entry).size)}`);
    variants.push({ label: 'same code, unsplit (one file)', files: [one.entry], times: [] });
  }
  for (const file of args.against) {
    console.log(`against ${file}: ${kb(statSync(file).size)}`);
    variants.push({ label: `against ${path.basename(file)}`, files: [file], times: [] });
  }
  if (args.compareRuntimeSdk) {
    const alt = await unsplitBundle(args.kind, ['@aws-sdk/*'], 'runtime-sdk');
    console.log(`unsplit with @aws-sdk/* external (runtime SDK; not used): ${kb(statSync(alt.entry).size)}`);
    variants.push({ label: 'unsplit, runtime SDK (not used)', files: [alt.entry], times: [] });
  }
  for (let i = 0; i < args.runs; i++) for (const v of variants) v.times.push(coldImportMs(v.files, v.engine));

  const base = stats(variants[0].times).mean;
  console.log(`cold import over ${args.runs} fresh node processes per variant, alternating:`);
  for (const v of variants) {
    const t = stats(v.times);
    console.log(`  ${v.label.padEnd(52)} mean ${ms(t.mean)}, median ${ms(t.median)}, min ${ms(t.min)}, max ${ms(t.max)} (mean ×${(t.mean / base).toFixed(2)} of deployed)`);
  }
  if (args.kind === 'meta' && bad.length > 0) {
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
