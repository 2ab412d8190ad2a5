/**
 * What the API functions' entries leave to first use (issue #37; docs/deploy.md, "What each
 * function loads at a cold start"): no handler module is in what a cold start loads — each is a
 * chunk of its own (lib/operations/handlers-lazy.ts) — and no bundle carries `semver`, which only
 * the X-Ray SDK's unused AWS SDK v2 patcher imports (infra/bundle-stubs/semver.cjs), nor
 * `cls-hooked` (infra/bundle-stubs/cls-hooked.cjs, the X-Ray SDK's context on AsyncLocalStorage).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleFunction, ENTRY_POINTS, esbuildOptions, REPO_ROOT } from '../../infra/bundling.js';
import type { BundleKind } from '../../infra/bundle-kinds.js';
import { staticClosure } from '../../infra/measure-bundle.js';
import { HANDLER_EXPORTS } from '../../lib/contract/operations.js';

const HANDLER_MODULES = Object.keys(HANDLER_EXPORTS);
const META_MODULES = HANDLER_MODULES.filter((m) => !m.startsWith('lib/operations/data/'));

async function metafileOf(kind: BundleKind): Promise<Metafile> {
  return (await build({ ...esbuildOptions(kind, path.join(REPO_ROOT, 'cdk.out', `lazy-test-${kind}`)), write: false, metafile: true, logLevel: 'silent' })).metafile!;
}

/** The inputs of `outputs`. */
const inputsOf = (metafile: Metafile, outputs: readonly string[]) => new Set(outputs.flatMap((o) => Object.keys(metafile.outputs[o].inputs)));

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe('API bundles: handler modules are chunks loaded on first use', () => {
  for (const [kind, modules] of [['meta', META_MODULES], ['data', HANDLER_MODULES]] as const) {
    it(`${kind}: no handler module in what the entry loads; each one in a chunk of its own`, async () => {
      const metafile = await metafileOf(kind);
      const entry = Object.keys(metafile.outputs).find((o) => o.endsWith('/index.mjs'))!;
      const eager = staticClosure(metafile, path.join(REPO_ROOT, entry));
      expect(eager[0]).toBe(entry);
      const eagerInputs = inputsOf(metafile, eager);
      // What a cold start always needs is there (the router, the lazy map itself)…
      expect(eagerInputs).toContain('lib/http/router.ts');
      expect(eagerInputs).toContain('lib/operations/handlers-lazy.ts');
      // …and no handler module, nor the eager maps that import them all.
      expect([...eagerInputs].filter((i) => HANDLER_MODULES.includes(i) || /lib\/operations\/handlers-(meta|data|all)\.ts$/.test(i))).toEqual([]);
      // Every one of the function's handler modules is in the bundle, in a chunk the entry does not load.
      const lazy = inputsOf(metafile, Object.keys(metafile.outputs).filter((o) => !eager.includes(o)));
      for (const m of modules) expect(lazy, m).toContain(m);
      if (kind === 'meta') expect([...lazy].filter((i) => i.startsWith('lib/operations/data/'))).toEqual([]);
    });
  }

  it('the entries import without any handler chunk on disk (nothing loads one before its first request)', () => {
    for (const kind of ['meta', 'data'] as const) {
      const outdir = mkdtempSync(path.join(tmpdir(), `rask-lazy-${kind}-`));
      scratch.push(outdir);
      const { metafile } = bundleFunction(kind, outdir);
      const entry = Object.keys(metafile.outputs).find((o) => o.endsWith('/index.mjs'))!;
      const eager = new Set(staticClosure(metafile, path.join(REPO_ROOT, entry)));
      // Delete every chunk that holds a handler module (and only those the entry does not load).
      const handlerChunks = Object.entries(metafile.outputs)
        .filter(([o, out]) => o.endsWith('.mjs') && !eager.has(o) && Object.keys(out.inputs).some((i) => HANDLER_MODULES.includes(i)))
        .map(([o]) => path.resolve(REPO_ROOT, o));
      expect(handlerChunks.length, kind).toBeGreaterThanOrEqual(kind === 'meta' ? META_MODULES.length : HANDLER_MODULES.length);
      for (const chunk of handlerChunks) rmSync(chunk);
      // Outside Lambda (no AWS_LAMBDA_FUNCTION_NAME) the import starts nothing: it only loads modules.
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_LAMBDA_') && !k.startsWith('RASK_')));
      const script = `const m = await import(${JSON.stringify(pathToFileURL(path.join(outdir, 'index.mjs')).href)}); process.stdout.write(typeof m.handler);`;
      expect(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, cwd: outdir, encoding: 'utf8' }), kind).toBe('function');
    }
  });
});

describe('bundles: semver is a stub', () => {
  it('no bundle carries semver; the X-Ray SDK v2 patcher, its one importer, gets the stub', async () => {
    for (const kind of Object.keys(ENTRY_POINTS) as BundleKind[]) {
      const metafile = await metafileOf(kind);
      const inputs = Object.keys(metafile.inputs);
      expect(inputs.filter((i) => /node_modules\/semver\//.test(i)), kind).toEqual([]);
      const importers = Object.entries(metafile.inputs)
        .filter(([, input]) => input.imports.some((i) => i.path === 'infra/bundle-stubs/semver.cjs'))
        .map(([file]) => file.replace(/^.*node_modules\//, ''));
      expect(importers, kind).toEqual(['aws-xray-sdk-core/dist/lib/patchers/aws_p.js']);
    }
  });
});

describe('bundles: cls-hooked is a stub', () => {
  it('no bundle carries cls-hooked; the X-Ray SDK context, its one importer, gets the AsyncLocalStorage stub', async () => {
    for (const kind of Object.keys(ENTRY_POINTS) as BundleKind[]) {
      const metafile = await metafileOf(kind);
      expect(Object.keys(metafile.inputs).filter((i) => /node_modules\/(cls-hooked|emitter-listener|async-hook-jl|stack-chain)\//.test(i)), kind).toEqual([]);
      const importers = Object.entries(metafile.inputs)
        .filter(([, input]) => input.imports.some((i) => i.path === 'infra/bundle-stubs/cls-hooked.cjs'))
        .map(([file]) => file.replace(/^.*node_modules\//, ''));
      expect(importers, kind).toEqual(['aws-xray-sdk-core/dist/lib/context_utils.js']);
    }
  });
});
