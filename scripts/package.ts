/**
 * `npm run package`: the construct library as an npm package (docs/deploy.md, "Rask in your own
 * CDK app"). Writes dist/package and packs it into dist/rask-cdk-<version>.tgz:
 *
 * - `index.js`: infra/index.ts bundled with esbuild, aws-cdk-lib and constructs left to the
 *   team's app; infra/asset-source.ts (which builds code at synth) replaced by
 *   infra/packaged-assets.ts (which reads it from `assets/`).
 * - `assets/`: every function asset as `cdk synth` here builds it (infra/bundling.ts,
 *   infra/operation-bundles.ts), the LanceDB layer's package.json and lockfile (installed with npm
 *   at the team's synth, as here), the job task image's build context.
 * - `types/`: the declarations of infra/index.ts and what it names.
 *
 * Usage: npx tsx scripts/package.ts [--no-pack]
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { ENTRY_POINTS, LAYER_SOURCE_DIR, REPO_ROOT, bundleFunction } from '../infra/bundling.js';
import type { BundleKind } from '../infra/bundle-kinds.js';
import { writeJobTaskImageContext } from '../infra/job-task-image.js';
import { bundleOperations } from '../infra/operation-bundles.js';

const PACKAGE_NAME = 'rask-cdk';
const DIST = path.join(REPO_ROOT, 'dist');
const PACKAGE_DIR = path.join(DIST, 'package');
/**
 * Left to the app that uses the constructs: one copy of each, the app's own. Nothing else is
 * imported at synth (cdk-nag's acknowledgements go through aws-cdk-lib's `Validations`; an app
 * that wants the checks adds cdk-nag itself).
 */
const PEERS = ['aws-cdk-lib', 'constructs'];

const rootPackage = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const versionOf = (name: string) => rootPackage.dependencies[name] ?? rootPackage.devDependencies[name];

/** The tarball's path once packed. */
function tarballPath(): string {
  return path.join(DIST, `${PACKAGE_NAME}-${rootPackage.version}.tgz`);
}

/** Swaps infra/asset-source.ts for infra/packaged-assets.ts wherever it is imported. */
const packagedAssets: Plugin = {
  name: 'rask-packaged-assets',
  setup(b) {
    b.onResolve({ filter: /asset-source\.js$/ }, (args) => {
      const resolved = path.resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts'));
      if (resolved !== path.join(REPO_ROOT, 'infra', 'asset-source.ts')) return undefined;
      return { path: path.join(REPO_ROOT, 'infra', 'packaged-assets.ts') };
    });
  },
};

function writeAssets(): void {
  const assets = path.join(PACKAGE_DIR, 'assets');
  for (const kind of Object.keys(ENTRY_POINTS) as BundleKind[]) bundleFunction(kind, path.join(assets, kind));
  for (const bundle of ['meta', 'data'] as const) bundleOperations(bundle, path.join(assets, `operations-${bundle}`));
  mkdirSync(path.join(assets, 'lancedb-layer'), { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(path.join(LAYER_SOURCE_DIR, f), path.join(assets, 'lancedb-layer', f));
  writeJobTaskImageContext(path.join(assets, 'job-task-image'), true);
}

async function writeEntry(): Promise<void> {
  const result = await build({
    entryPoints: [path.join(REPO_ROOT, 'infra', 'index.ts')],
    outfile: path.join(PACKAGE_DIR, 'index.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    // The team's synth runs on its own Node, 20 or newer (engines below).
    target: 'node20',
    sourcemap: 'linked',
    external: [...PEERS, ...PEERS.map((p) => `${p}/*`)],
    plugins: [packagedAssets],
    metafile: true,
    logLevel: 'warning',
    absWorkingDir: REPO_ROOT,
  });
  // What builds code at synth must not be in the package: it would need esbuild and this checkout.
  const buildSide = Object.keys(result.metafile.inputs).filter((i) => /^infra\/(asset-source|bundling|operation-bundles|job-task-image|console-assets)\.ts$|node_modules\/(esbuild|@lancedb)\//.test(i));
  if (buildSide.length) throw new Error(`the package's entry reaches build-time modules: ${buildSide.join(', ')}`);
}

function writeTypes(): void {
  const config = path.join(DIST, 'tsconfig.package.json');
  writeFileSync(
    config,
    JSON.stringify({
      extends: '../tsconfig.json',
      compilerOptions: { noEmit: false, declaration: true, emitDeclarationOnly: true, outDir: path.join(PACKAGE_DIR, 'types'), rootDir: REPO_ROOT },
      files: ['../infra/index.ts'],
      include: [],
    }),
  );
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { stdio: 'inherit' });
}

function writeManifest(): void {
  const manifest = {
    name: PACKAGE_NAME,
    version: rootPackage.version,
    description: 'rask as a CDK construct library: RaskCatalog and RaskCatalogState, with the Lambda code built in',
    license: rootPackage.license,
    type: 'module',
    main: './index.js',
    types: './types/infra/index.d.ts',
    exports: { '.': { types: './types/infra/index.d.ts', import: './index.js' } },
    files: ['index.js', 'index.js.map', 'types', 'assets', 'README.md'],
    engines: { node: '>=20' },
    peerDependencies: Object.fromEntries(PEERS.map((p) => [p, `^${versionOf(p)}`])),
  };
  writeFileSync(path.join(PACKAGE_DIR, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  copyFileSync(path.join(REPO_ROOT, 'infra', 'package', 'README.md'), path.join(PACKAGE_DIR, 'README.md'));
}

function pack(): string {
  execFileSync('npm', ['pack', '--pack-destination', DIST, '--loglevel=error'], { cwd: PACKAGE_DIR, stdio: ['ignore', 'ignore', 'inherit'] });
  return tarballPath();
}

export async function buildPackage(options: { pack?: boolean } = {}): Promise<{ dir: string; tarball?: string }> {
  const started = Date.now();
  rmSync(PACKAGE_DIR, { recursive: true, force: true });
  rmSync(tarballPath(), { force: true });
  mkdirSync(PACKAGE_DIR, { recursive: true });
  writeAssets();
  await writeEntry();
  writeTypes();
  writeManifest();
  const built = Date.now();
  const tarball = options.pack === false ? undefined : pack();
  const du = (dir: string) => execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0];
  console.log(
    `package: ${PACKAGE_DIR} ${(Number(du(PACKAGE_DIR)) / 1024).toFixed(1)} MiB unpacked, built in ${((built - started) / 1000).toFixed(1)} s` +
      (tarball ? `; ${path.basename(tarball)} ${(statSync(tarball).size / 2 ** 20).toFixed(1)} MiB, packed in ${((Date.now() - built) / 1000).toFixed(1)} s` : ''),
  );
  return { dir: PACKAGE_DIR, tarball };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildPackage({ pack: !process.argv.includes('--no-pack') });
}
