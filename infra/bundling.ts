import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { buildSync, type BuildOptions, type Metafile } from 'esbuild';
import { assertPolicyTextCurrent } from '../scripts/policy-text.js';
import type { BundleKind } from './bundle-kinds.js';
import { writeConsole } from './console-assets.js';

/**
 * The esbuild settings of the Lambda bundles, and the one function that builds a function's
 * asset directory from them (`bundleFunction`): the stack (constructs/rask-function.ts),
 * infra/measure-bundle.ts and test/infra/bundle.test.ts build exactly the same thing.
 */

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Lambda runtime is nodejs22.x; esbuild may then leave modern syntax alone. */
export const ESBUILD_TARGET = 'node22';

/**
 * The code is ESM but some bundled CommonJS dependencies call `require()` for Node built-ins;
 * esbuild's ESM output has no `require`, so one is created from `import.meta.url`. The alias
 * keeps the banner's import from colliding with a `createRequire` imported by our own modules.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __raskCreateRequire } from 'node:module'; const require = __raskCreateRequire(import.meta.url);";

/**
 * LanceDB (a ~160 MB native module) and the apache-arrow copy it shares with our code come from
 * the Lambda layer at runtime; bundling either would duplicate Arrow's classes (the dual-package
 * hazard) or try to inline a `.node` file.
 */
export const LAYER_MODULES = ['@lancedb/lancedb', 'apache-arrow'] as const;

/** The LanceDB layer's package.json and lockfile: the versions (and so the asset hash) are pinned there. */
export const LAYER_SOURCE_DIR = path.join(REPO_ROOT, 'infra', 'lancedb-layer');

/**
 * The AWS SDK is bundled, not taken from the Lambda runtime: the registry's compare-and-swap
 * depends on `IfMatch`/`IfNoneMatch` being in the SDK's S3 model (an older runtime copy would
 * drop unmodelled parameters silently and turn a conditional write into a blind one). Bundling
 * pins the version the tests ran against.
 */

export const ENTRY_POINTS: Readonly<Record<BundleKind, string>> = {
  meta: path.join(REPO_ROOT, 'functions', 'api-meta.ts'),
  data: path.join(REPO_ROOT, 'functions', 'api-data.ts'),
  jobs: path.join(REPO_ROOT, 'functions', 'maintenance-jobs.ts'),
  authorizer: path.join(REPO_ROOT, 'functions', 'authorizer.ts'),
  'maintenance-reconcile': path.join(REPO_ROOT, 'functions', 'maintenance-reconcile.ts'),
  'maintenance-orphans': path.join(REPO_ROOT, 'functions', 'maintenance-orphans.ts'),
  'maintenance-sweep': path.join(REPO_ROOT, 'functions', 'maintenance-sweep.ts'),
  'maintenance-index': path.join(REPO_ROOT, 'functions', 'maintenance-index.ts'),
  'change-relay': path.join(REPO_ROOT, 'functions', 'change-relay.ts'),
};

/**
 * The Cedar policy engine (lib/governance/policy-engine.ts) loads a 4 MB WebAssembly file from
 * next to its own module, which a bundle cannot carry: it stays a real node_modules package in
 * the function's asset (copied by `bundleFunction`), imported lazily on the first authorization.
 */
export const POLICY_ENGINE_MODULE = '@cedar-policy/cedar-wasm';

/**
 * The parts of an installed package a Node.js function loads: cedar-wasm also ships browser and
 * bundler builds (`web/`, `esm/`), 8 MB that no function imports.
 */
export const INSTALLED_PARTS: Readonly<Record<string, readonly string[]>> = {
  [POLICY_ENGINE_MODULE]: ['package.json', 'nodejs'],
};

/** Packages installed into a function's asset instead of being bundled. */
export function installedModules(kind: BundleKind): string[] {
  return kind === 'meta' || kind === 'data' ? [POLICY_ENGINE_MODULE] : [];
}

/** Modules left out of each bundle. The metadata bundle leaves nothing out: it must not need LanceDB at all. */
export function externalModules(kind: BundleKind): string[] {
  switch (kind) {
    case 'meta':
      return [POLICY_ENGINE_MODULE];
    case 'data':
      return [...LAYER_MODULES, POLICY_ENGINE_MODULE];
    case 'jobs':
      return [...LAYER_MODULES];
    case 'authorizer':
      return [];
    // No scheduled pass opens a dataset (sweep and index build queue per-table jobs that the jobs
    // function runs): no layer, nothing left out.
    case 'maintenance-reconcile':
    case 'maintenance-orphans':
    case 'maintenance-sweep':
    case 'maintenance-index':
    // The change relay reads the registry and manifests' names: no dataset is opened.
    case 'change-relay':
      return [];
  }
}

/**
 * Packages replaced by a stub in every bundle (issue #37): `semver`, whose only importer is the
 * X-Ray SDK's AWS SDK v2 patcher, which no rask code calls (infra/bundle-stubs/semver.cjs says
 * why), and `cls-hooked`, the X-Ray SDK's segment context, by the same API on AsyncLocalStorage
 * (infra/bundle-stubs/cls-hooked.cjs: cls-hooked's destroy-tracking async hook was most of a
 * cold start's garbage collection). test/infra/lazy-bundle.test.ts checks that nothing else
 * imports either; test/infra/cls-hooked-stub.test.ts that the SDK sees the same segments.
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  semver: './infra/bundle-stubs/semver.cjs',
  'cls-hooked/context': './infra/bundle-stubs/cls-hooked.cjs',
};

/** Settings common to every bundle. */
export const SHARED = {
  format: 'esm',
  platform: 'node',
  target: ESBUILD_TARGET,
  /** Prefer packages' ESM builds: smaller after tree shaking. */
  mainFields: ['module', 'main'],
  minify: true,
  /** Minified but with readable function names in stack traces. */
  keepNames: true,
  /**
   * Source maps written beside each file (`index.mjs.map`, linked by a comment) for reading a
   * minified stack trace offline; the functions do not run with `--enable-source-maps`, which
   * costs cold-start time on every invocation, so at run time they cost nothing (issue #37).
   */
  sourcemap: 'linked',
  banner: ESM_REQUIRE_BANNER,
} as const;

/**
 * Code splitting: the entry (`index.mjs`) holds what a cold start runs; every module reached
 * only through a dynamic `import()` (the EventBridge client on the first event, the Lambda
 * client on the first detailed DescribeTable, the SDK's SSO / ini credential providers, …) is a
 * chunk of its own under `chunks/`, loaded on first use. Cold import time is dominated by V8
 * compiling the entry, which is proportional to its size (docs/benchmarks.md). NodejsFunction
 * cannot split (it passes `--outfile`), hence `bundleFunction` below.
 */
export const SPLITTING = { splitting: true, entryNames: 'index', chunkNames: 'chunks/[name]-[hash]' } as const;

/** Options for esbuild's JS API for `kind`'s asset, written under `outdir` (entry `index.mjs`). */
export function esbuildOptions(kind: BundleKind, outdir: string) {
  return { entryPoints: [ENTRY_POINTS[kind]], ...assetOptions(externalModules(kind), outdir) };
}

/** Everything but the entry: shared by the fixed entries and the generated per-operation ones. */
export function assetOptions(external: string[], outdir: string) {
  return {
    bundle: true,
    format: SHARED.format,
    platform: SHARED.platform,
    target: SHARED.target,
    mainFields: [...SHARED.mainFields],
    minify: SHARED.minify,
    keepNames: SHARED.keepNames,
    sourcemap: SHARED.sourcemap,
    banner: { js: SHARED.banner },
    external,
    alias: { ...BUNDLE_ALIASES },
    outExtension: { '.js': '.mjs' },
    ...SPLITTING,
    outdir,
    absWorkingDir: REPO_ROOT,
  };
}

/**
 * Builds `kind`'s Lambda asset into `outdir` (emptied first): the split bundle (handler
 * `index.handler`) and, under `node_modules/`, the packages that are installed rather than bundled
 * (`installedModules`), copied from the repository's node_modules — the versions the tests ran
 * against, with no network. Synchronous, as CDK's local bundling hook is.
 */
export function bundleFunction(kind: BundleKind, outdir: string): { metafile: Metafile } {
  // The bundles carry the policies as rendered text, validated against the schema here, at
  // build time: a policy the schema rejects fails synth (scripts/policy-text.ts).
  if (installedModules(kind).includes(POLICY_ENGINE_MODULE)) assertPolicyTextCurrent();
  const written = writeAsset(esbuildOptions(kind, outdir), installedModules(kind), outdir);
  // The metadata function also serves the web console at /console (docs/console.md).
  if (kind === 'meta') writeConsole(path.join(outdir, 'console'));
  return written;
}

/** Runs esbuild with `options` into `outdir` (emptied first) and copies `installed` packages next to the bundle. */
export function writeAsset(options: BuildOptions, installed: readonly string[], outdir: string): { metafile: Metafile } {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = buildSync({ ...options, outdir, metafile: true, logLevel: 'warning' });
  for (const name of installed) {
    for (const part of INSTALLED_PARTS[name] ?? ['.']) {
      cpSync(path.join(REPO_ROOT, 'node_modules', name, part), path.join(outdir, 'node_modules', name, part), { recursive: true, dereference: true });
    }
  }
  return { metafile: result.metafile! };
}
