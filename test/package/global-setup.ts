/**
 * The package acceptance's setup (vitest.package.config.ts), once before its tests: packs the
 * construct library (scripts/package.ts), installs the tarball with npm into a fresh app outside
 * the repository (./acceptance-app.ts) and synthesizes that app in three shapes, offline apart from
 * npm's cache. The tests then read what this leaves in ACCEPTANCE_DIR, and the deploy suite
 * (test/deploy) runs against the two assemblies.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../infra/bundling.js';
import { buildPackage } from '../../scripts/package.js';
import { ACCEPTANCE_DIR, APP_DIR, ONE_STACK_OUT, PER_OPERATION_OUT, TIMINGS_FILE, TWO_STACKS_OUT, writeAcceptanceApp } from './acceptance-app.js';

export default async function setup(): Promise<void> {
  const timings: Record<string, number> = {};
  const timed = async <T>(name: string, run: () => T | Promise<T>): Promise<T> => {
    const started = Date.now();
    const result = await run();
    timings[name] = Date.now() - started;
    return result;
  };
  rmSync(ACCEPTANCE_DIR, { recursive: true, force: true });
  const { tarball } = await timed('package', () => buildPackage());
  const root = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  writeAcceptanceApp(tarball!, { ...root.devDependencies, ...root.dependencies });
  // npm as a team runs it; the registry's packages come from npm's cache when it has them.
  await timed('install', () =>
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: APP_DIR, stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 }),
  );
  const synth = (shape: string, outdir: string) =>
    execFileSync(path.join(APP_DIR, 'node_modules', '.bin', 'cdk'), ['synth', '-q', '-c', `shape=${shape}`, '-o', outdir], {
      cwd: APP_DIR,
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 900_000,
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
    });
  await timed('synth one-stack', () => synth('one-stack', ONE_STACK_OUT));
  await timed('synth two-stacks', () => synth('two-stacks', TWO_STACKS_OUT));
  await timed('synth per-operation', () => synth('per-operation', PER_OPERATION_OUT));
  writeFileSync(TIMINGS_FILE, JSON.stringify(timings));
}
