/**
 * The team's app the package acceptance installs the tarball into (test/package/global-setup.ts):
 * a directory outside this repository with its own package.json, node_modules from npm, and an
 * app that imports `rask-cdk` by name — plain JavaScript for the synth, TypeScript for the type
 * check. Nothing here imports from the repository.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Fixed, outside the repository: vitest's config points the deploy suite at its assemblies. */
export const ACCEPTANCE_DIR = path.join(tmpdir(), 'rask-package-acceptance');
export const APP_DIR = path.join(ACCEPTANCE_DIR, 'app');
/** One stack holding state and catalog: what the deploy suite's artifacts test runs. */
export const ONE_STACK_OUT = path.join(ACCEPTANCE_DIR, 'one-stack.out');
/** State and compute in two stacks, with the job task tier: what the deploy suite's task-tier test runs. */
export const TWO_STACKS_OUT = path.join(ACCEPTANCE_DIR, 'two-stacks.out');
/** How long each step of the setup took (./global-setup.ts writes it, the package test prints it). */
export const TIMINGS_FILE = path.join(ACCEPTANCE_DIR, 'timings.json');
/** One stack in per-operation mode: the two shared operation assets of the package. */
export const PER_OPERATION_OUT = path.join(ACCEPTANCE_DIR, 'per-operation.out');

/**
 * The app, synthesized as a team does: `npx cdk synth -c shape=<shape> -o <outdir>` with cdk.json
 * naming `node app.mjs`. cdk-nag's AwsSolutions checks fail the synth on a finding.
 */
const APP_JS = `import { App, CfnOutput, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { RaskCatalog, RaskCatalogState } from 'rask-cdk';

const app = new App();
const shape = app.node.tryGetContext('shape');
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
if (shape === 'one-stack') {
  const stack = new Stack(app, 'Platform');
  const state = new RaskCatalogState(stack, 'CatalogState', { trashGraceDays: 7 });
  const catalog = new RaskCatalog(stack, 'Catalog', { state, dataMemoryMb: 3008, alarmEmail: 'ops@example.com', throttleBurstLimit: 300 });
  new CfnOutput(stack, 'CatalogUri', { value: catalog.endpoint });
} else if (shape === 'two-stacks') {
  const data = new RaskCatalogState(new Stack(app, 'CatalogData'), 'State', { parameterPrefix: '/platform/rask' });
  new RaskCatalog(new Stack(app, 'CatalogCompute'), 'Catalog', { state: data, jobsTaskTier: true, jobsTaskIndexCostRows: 10000 });
} else if (shape === 'per-operation') {
  const stack = new Stack(app, 'PerOperation');
  new RaskCatalog(stack, 'Catalog', { state: new RaskCatalogState(stack, 'State'), functionMode: 'per-operation' });
} else {
  throw new Error('usage: npx cdk synth -c shape=one-stack|two-stacks|per-operation');
}
app.synth();
`;

/** The same app as a team writes it in TypeScript: type-checked against the package's declarations. */
const APP_TS = `import { App, Stack } from 'aws-cdk-lib';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { RaskCatalog, RaskCatalogState, RaskConfigError, type RaskCatalogProps } from 'rask-cdk';

const app = new App();
const stack = new Stack(app, 'Platform');
const state = new RaskCatalogState(stack, 'CatalogState', { trashGraceDays: 7, parameterPrefix: '/platform/rask' });
const props: RaskCatalogProps = { state, functionMode: 'per-operation', dataMemoryMb: 3008 };
const catalog = new RaskCatalog(stack, 'Catalog', props);
const endpoint: string = catalog.endpoint;
const bucket: s3.IBucket = state.warehouseBucket;
const error: Error = new RaskConfigError('typed');
export { endpoint, bucket, error };
`;

export function writeAcceptanceApp(tarball: string, versions: Readonly<Record<string, string>>): void {
  mkdirSync(APP_DIR, { recursive: true });
  const manifest = {
    name: 'acceptance-app',
    private: true,
    type: 'module',
    dependencies: { 'rask-cdk': `file:${tarball}`, 'aws-cdk-lib': versions['aws-cdk-lib'], constructs: versions.constructs, 'cdk-nag': versions['cdk-nag'] },
    devDependencies: { 'aws-cdk': versions['aws-cdk'], typescript: versions.typescript, '@types/node': versions['@types/node'] },
  };
  writeFileSync(path.join(APP_DIR, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(path.join(APP_DIR, 'app.mjs'), APP_JS);
  writeFileSync(path.join(APP_DIR, 'cdk.json'), `${JSON.stringify({ app: 'node app.mjs', context: { 'cli-telemetry': false } }, null, 2)}\n`);
  writeFileSync(path.join(APP_DIR, 'app.ts'), APP_TS);
  // What `cdk init app --language typescript` writes, in substance: strict, and library
  // declarations checked (no skipLibCheck).
  writeFileSync(
    path.join(APP_DIR, 'tsconfig.json'),
    `${JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['es2022'], strict: true, noEmit: true, types: ['node'] }, files: ['app.ts'] }, null, 2)}\n`,
  );
}
