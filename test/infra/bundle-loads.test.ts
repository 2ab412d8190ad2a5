import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { bundleFunction, ENTRY_POINTS, esbuildOptions, externalModules, installedModules, POLICY_ENGINE_MODULE } from '../../infra/bundling.js';
import type { BundleKind } from '../../infra/bundle-kinds.js';

/**
 * Every function's asset, as the stack deploys it (bundleFunction), loads: its entry and every
 * lazy chunk import in a fresh node process. The policy engine cannot be bundled (it reads its
 * WebAssembly file from `__dirname`, which an ESM chunk has not), so a bundle either installs it
 * (infra/bundling.ts, installedModules) or never reaches it: the jobs bundle once reached it
 * through the router it built and never used, and its engine chunk threw `__dirname is not
 * defined` on load (infra/measure-bundle.ts --kind jobs).
 */

const KINDS = Object.keys(ENTRY_POINTS) as BundleKind[];

describe('function assets load', () => {
  it.each(KINDS)('%s: the policy engine is installed and left out, or not in the module graph at all', async (kind) => {
    const result = await build({ ...esbuildOptions(kind, `/tmp/rask-loads-${kind}`), write: false, metafile: true, logLevel: 'silent' });
    const bundled = Object.keys(result.metafile.inputs).filter((i) => i.includes(`node_modules/${POLICY_ENGINE_MODULE}/`));
    expect(bundled, `${kind} bundles the policy engine's JavaScript`).toEqual([]);
    if (externalModules(kind).includes(POLICY_ENGINE_MODULE)) expect(installedModules(kind)).toContain(POLICY_ENGINE_MODULE);
  });

  it('the jobs bundle carries no request guard and no policy engine: it serves no request and authorizes nothing', async () => {
    const result = await build({ ...esbuildOptions('jobs', '/tmp/rask-loads-jobs'), write: false, metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((i) => i.startsWith('lib/governance/') || i === 'lib/http/router.ts')).toEqual([]);
    expect(externalModules('jobs')).not.toContain(POLICY_ENGINE_MODULE);
  });

  it.each(KINDS)('%s: the deployed asset imports, entry and every chunk, in a fresh node process', (kind) => {
    const outdir = mkdtempSync(path.join(tmpdir(), `rask-loads-${kind}-`));
    try {
      bundleFunction(kind, outdir);
      const chunks = readdirSync(path.join(outdir, 'chunks')).filter((f) => f.endsWith('.mjs'));
      const files = [path.join(outdir, 'index.mjs'), ...chunks.map((f) => path.join(outdir, 'chunks', f))];
      const script = files.map((f) => `await import(${JSON.stringify(pathToFileURL(f).href)});`).join(' ');
      // No RASK_* settings: importing must not need configuration (it is read on first request).
      const run = () => execFileSync(process.execPath, ['--input-type=module', '-e', `${script} process.stdout.write('loaded');`], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      });
      expect(run()).toBe('loaded');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
