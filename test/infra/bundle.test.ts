import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { esbuildOptions, type BundleKind } from '../../infra/bundling.js';
import { forbiddenInputs } from '../../infra/measure-bundle.js';

/**
 * Bundles the functions in memory with the stack's esbuild options and inspects the module
 * graph: the metadata bundle must not contain (or import) LanceDB or Arrow.
 */

async function bundle(kind: BundleKind): Promise<{ metafile: Metafile; text: string }> {
  const { outExtension: _unused, ...options } = esbuildOptions(kind);
  const result = await build({ ...options, outfile: `${kind}.mjs`, write: false, metafile: true, logLevel: 'silent' });
  return { metafile: result.metafile!, text: result.outputFiles![0].text };
}

/** Modules the bundle imports at runtime instead of containing them. */
function externalImports(metafile: Metafile): string[] {
  return Object.values(metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
}

const isBuiltin = (p: string) => p.startsWith('node:') || ['fs', 'path', 'os', 'crypto', 'http', 'https', 'stream', 'url', 'util', 'buffer', 'events', 'zlib', 'child_process', 'process', 'net', 'tls', 'dns', 'module', 'async_hooks', 'worker_threads', 'perf_hooks', 'string_decoder', 'querystring', 'assert', 'http2', 'timers', 'dgram'].includes(p.split('/')[0]);

describe('Lambda bundles', () => {
  it('metadata bundle contains no @lancedb/lancedb or apache-arrow and imports only Node built-ins (and the policy engine)', async () => {
    const { metafile, text } = await bundle('meta');
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.length).toBeGreaterThan(10);
    expect(inputs.filter((i) => i.includes('@lancedb/lancedb') || i.includes('apache-arrow'))).toEqual([]);
    expect(forbiddenInputs(metafile)).toEqual([]);
    // The one exception: the Cedar policy engine, installed next to the bundle (infra/bundling.ts).
    expect(externalImports(metafile).filter((p) => !isBuiltin(p))).toEqual(['@cedar-policy/cedar-wasm/nodejs']);
    // The createRequire banner is there for bundled CommonJS that requires built-ins.
    expect(text.startsWith("import { createRequire as __raskCreateRequire } from 'node:module';")).toBe(true);
  });

  it('data bundle leaves LanceDB and Arrow to the layer (and the policy engine to its installed module)', async () => {
    const { metafile } = await bundle('data');
    expect(forbiddenInputs(metafile)).toEqual([]);
    expect(externalImports(metafile).filter((p) => !isBuiltin(p)).every((p) => ['@lancedb/lancedb', 'apache-arrow', '@cedar-policy/cedar-wasm/nodejs'].includes(p))).toBe(true);
  });

  it('jobs bundle leaves LanceDB and Arrow to the layer and carries the runners; the metadata bundle carries the job records only', async () => {
    const { metafile } = await bundle('jobs');
    expect(forbiddenInputs(metafile)).toEqual([]);
    expect(externalImports(metafile).filter((p) => !isBuiltin(p)).every((p) => ['@lancedb/lancedb', 'apache-arrow'].includes(p))).toBe(true);
    const inputs = Object.keys(metafile.inputs);
    for (const f of ['lib/jobs/worker.ts', 'lib/jobs/runners/create-index.ts', 'lib/jobs/runners/backfill.ts', 'lib/data/engine.ts']) {
      expect(inputs).toContain(f);
    }
    // DescribeTransaction / AlterTransaction read and write records; they never reach a runner.
    const meta = Object.keys((await bundle('meta')).metafile.inputs);
    expect(meta).toContain('lib/jobs/jobs.ts');
    expect(meta.filter((i) => i.startsWith('lib/jobs/runners/') || i.startsWith('lib/data/'))).toEqual([]);
  });

  it('authorizer bundle carries its own Secrets Manager client and nothing of the catalog', async () => {
    const { metafile } = await bundle('authorizer');
    expect(externalImports(metafile).filter((p) => !isBuiltin(p))).toEqual([]);
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.some((i) => i.includes('@aws-sdk/client-secrets-manager'))).toBe(true);
    expect(inputs.some((i) => i.includes('@lancedb') || i.includes('apache-arrow') || i.includes('lib/catalog'))).toBe(false);
  });
});
