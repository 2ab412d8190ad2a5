/**
 * Issue 29's acceptance: the construct library as a team gets it. The setup
 * (./global-setup.ts) packed it, installed the tarball into a fresh app outside this repository
 * and synthesized that app; here: what the installed package holds, that the app type-checks
 * against its declarations, that both assemblies are whole, cdk-nag clean and without exports,
 * and that a bad prop fails with the setting named. The deploy-confidence suite runs against
 * the same assemblies in this run (vitest.package.config.ts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../infra/bundling.js';
import { APP_DIR, ONE_STACK_OUT, PER_OPERATION_OUT, TIMINGS_FILE, TWO_STACKS_OUT } from './acceptance-app.js';

const INSTALLED = path.join(APP_DIR, 'node_modules', 'rask-cdk');

interface Template {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown>; Metadata?: Record<string, unknown> }>;
  Outputs?: Record<string, { Export?: unknown }>;
}
const template = (outdir: string, stack: string) => JSON.parse(readFileSync(path.join(outdir, `${stack}.template.json`), 'utf8')) as Template;
const ofType = (t: Template, type: string) => Object.values(t.Resources).filter((r) => r.Type === type);
const files = (dir: string): string[] => readdirSync(dir, { recursive: true }).map(String);

describe('the packed construct library, installed into an app of its own', () => {
  it('was packed, installed and synthesized (times printed)', () => {
    const timings = JSON.parse(readFileSync(TIMINGS_FILE, 'utf8')) as Record<string, number>;
    console.log(`package acceptance: ${Object.entries(timings).map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`).join(', ')}`);
    expect(Object.keys(timings)).toEqual(['package', 'install', 'synth one-stack', 'synth two-stacks', 'synth per-operation']);
  });

  it('holds the bundled entry, declarations and prebuilt assets, and no source of this repository', () => {
    expect(APP_DIR.startsWith(REPO_ROOT)).toBe(false);
    const top = readdirSync(INSTALLED).sort();
    expect(top).toEqual(['README.md', 'assets', 'index.js', 'index.js.map', 'package.json', 'types']);
    expect(readdirSync(path.join(INSTALLED, 'assets')).sort()).toEqual(
      ['authorizer', 'change-relay', 'data', 'job-task-image', 'jobs', 'lancedb-layer', 'maintenance-index', 'maintenance-orphans', 'maintenance-reconcile', 'maintenance-sweep', 'meta', 'operations-data', 'operations-meta'].sort(),
    );
    expect(files(INSTALLED).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    // The entry carries no bundler: the app synthesizes without esbuild installed.
    const entry = readFileSync(path.join(INSTALLED, 'index.js'), 'utf8');
    expect(entry).not.toMatch(/from ["']esbuild["']/);
    expect(existsSync(path.join(APP_DIR, 'node_modules', 'esbuild'))).toBe(false);
    const manifest = JSON.parse(readFileSync(path.join(INSTALLED, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; dependencies?: Record<string, string> };
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(['aws-cdk-lib', 'constructs']);
    // Everything else it needs at synth is bundled into index.js.
    expect(manifest.dependencies ?? {}).toEqual({});
    const unpacked = Number(execFileSync('du', ['-sk', INSTALLED], { encoding: 'utf8' }).split('\t')[0]) * 1024;
    console.log(`installed package: ${(unpacked / 2 ** 20).toFixed(1)} MiB`);
  });

  it("type-checks a TypeScript app against the package's declarations (strict, library declarations checked)", () => {
    const tsc = spawnSync(process.execPath, [path.join(APP_DIR, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: APP_DIR, encoding: 'utf8', timeout: 300_000 });
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.status).toBe(0);
  });

  it('one stack: every function has its prebuilt code in the assembly, no export, cdk-nag clean', () => {
    const t = template(ONE_STACK_OUT, 'Platform');
    const fns = functionsWithCode(ONE_STACK_OUT, t);
    expect(fns.length).toBeGreaterThanOrEqual(9);
    const memory = fns.map((f) => f.Properties!.MemorySize);
    expect(memory).toContain(3008);
    expect(Object.values(t.Outputs ?? {}).filter((o) => o.Export)).toEqual([]);
    expectNagClean(ONE_STACK_OUT);
  });

  it('two stacks: the compute stack reads SSM parameters (no export, no import), the task tier image context is in the assembly, cdk-nag clean', () => {
    const data = template(TWO_STACKS_OUT, 'CatalogData');
    const compute = template(TWO_STACKS_OUT, 'CatalogCompute');
    const names = ofType(data, 'AWS::SSM::Parameter').map((p) => String(p.Properties!.Name));
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((n) => n.startsWith('/platform/rask/'))).toBe(true);
    expect(Object.values(data.Outputs ?? {}).filter((o) => o.Export)).toEqual([]);
    expect(JSON.stringify(compute)).not.toContain('Fn::ImportValue');
    expect(ofType(compute, 'AWS::ECS::TaskDefinition')).toHaveLength(1);
    const images = readdirSync(TWO_STACKS_OUT).filter((d) => existsSync(path.join(TWO_STACKS_OUT, d, 'Dockerfile')));
    expect(images).toHaveLength(1);
    expect(statSync(path.join(TWO_STACKS_OUT, images[0], 'app', 'index.mjs')).size).toBeGreaterThan(100_000);
    expectNagClean(TWO_STACKS_OUT);
  });

  it("per-operation: each operation's function has its entry in one of the two shared operation assets, cdk-nag clean", () => {
    const parent = template(PER_OPERATION_OUT, 'PerOperation');
    const nested = Object.values(parent.Resources).filter((r) => r.Type === 'AWS::CloudFormation::Stack');
    expect(nested).toHaveLength(1);
    const operations = JSON.parse(readFileSync(path.join(PER_OPERATION_OUT, String(nested[0].Metadata!['aws:asset:path'])), 'utf8')) as Template;
    const fns = functionsWithCode(PER_OPERATION_OUT, operations);
    expect(fns.length).toBeGreaterThan(80);
    expect(new Set(fns.map((f) => f.Metadata!['aws:asset:path'])).size).toBe(2);
    expectNagClean(PER_OPERATION_OUT);
  });

  it('a bad prop fails the synth with the setting named', () => {
    const run = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "import { App, Stack } from 'aws-cdk-lib'; import { RaskCatalog, RaskCatalogState } from 'rask-cdk'; const s = new Stack(new App(), 'S'); new RaskCatalog(s, 'C', { state: new RaskCatalogState(s, 'St'), dataMemoryMb: 64 });"],
      { cwd: APP_DIR, encoding: 'utf8', timeout: 120_000 },
    );
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/RaskConfigError: .*dataMemoryMb must be an integer from 512/);
  });
});

/** The template's functions with an asset of ours, each checked to hold its handler's module. */
function functionsWithCode(outdir: string, t: Template) {
  const fns = ofType(t, 'AWS::Lambda::Function').filter((f) => typeof f.Metadata?.['aws:asset:path'] === 'string');
  for (const fn of fns) {
    const dir = path.join(outdir, String(fn.Metadata!['aws:asset:path']));
    const handler = String(fn.Properties!.Handler);
    expect(existsSync(path.join(dir, `${handler.slice(0, handler.lastIndexOf('.'))}.mjs`)), `${dir} ${handler}`).toBe(true);
  }
  return fns;
}

/**
 * cdk-nag left nothing on the assembly: the app's checks fail its synth on a finding (so the
 * setup would have stopped), and the validation report they write lists no failure.
 */
function expectNagClean(outdir: string): void {
  const report = JSON.parse(readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as { pluginReports: { conclusion: string }[] };
  expect(report.pluginReports.filter((r) => r.conclusion !== 'success')).toEqual([]);
}
