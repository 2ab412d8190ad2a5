import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { esbuildOptions } from '../../infra/bundling.js';
import type { BundleKind } from '../../infra/bundle-kinds.js';
import { forbiddenInputs, staticClosure } from '../../infra/measure-bundle.js';

/**
 * Bundles the functions in memory with the stack's esbuild options and inspects the module
 * graph: the metadata bundle must not contain (or import) LanceDB or Arrow.
 */

async function bundle(kind: BundleKind): Promise<{ metafile: Metafile; text: string }> {
  const result = await build({ ...esbuildOptions(kind, `/tmp/rask-${kind}`), write: false, metafile: true, logLevel: 'silent' });
  // The entry (what a cold start loads); chunks are loaded on first use.
  const entry = result.outputFiles!.find((f) => f.path.endsWith('/index.mjs'))!;
  return { metafile: result.metafile!, text: entry.text };
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

  it('metadata entry loads the S3 client at cold start, leaves the Lambda, DynamoDB, STS and ECS clients to lazily loaded chunks, and carries no EventBridge client (the relay publishes)', async () => {
    const { metafile } = await bundle('meta');
    const eager = staticClosure(metafile, '/tmp/rask-meta/index.mjs');
    expect(eager[0]).toMatch(/index\.mjs$/);
    const packagesIn = (outputs: string[]) =>
      new Set(outputs.flatMap((o) => Object.keys(metafile.outputs[o].inputs)).map((i) => /node_modules\/(@aws-sdk\/client-[^/]+)/.exec(i)?.[1]).filter(Boolean));
    expect([...packagesIn(eager)]).toEqual(['@aws-sdk/client-s3']);
    const lazy = Object.keys(metafile.outputs).filter((o) => !eager.includes(o));
    // ECS: a cancel of a task-tier job stops its task (lib/app/aws-jobs.ts), loaded only then.
    expect([...packagesIn(lazy)].sort()).toEqual(['@aws-sdk/client-dynamodb', '@aws-sdk/client-ecs', '@aws-sdk/client-lambda', '@aws-sdk/client-sts']);
    // Only what the adapters use is kept (a dynamic import of the SDK package would keep all its commands).
    const lazyInputs = lazy.flatMap((o) => Object.keys(metafile.outputs[o].inputs));
    expect(lazyInputs.some((i) => i.includes('client-dynamodb') && /ScanCommand|CreateTableCommand/.test(i))).toBe(false);
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
    for (const f of ['lib/jobs/worker.ts', 'lib/jobs/runners/create-index.ts', 'lib/jobs/runners/backfill.ts', 'lib/adapters/lance/engine.ts']) {
      expect(inputs).toContain(f);
    }
    // DescribeTransaction / AlterTransaction read and write records; they never reach a runner.
    const meta = Object.keys((await bundle('meta')).metafile.inputs);
    expect(meta).toContain('lib/queue/jobs.ts');
    expect(meta.filter((i) => i.startsWith('lib/jobs/runners/') || (i.startsWith('lib/data/') || i.startsWith('lib/adapters/lance/')))).toEqual([]);
  });

  it('sweep and index-build bundles only walk and enqueue: no LanceDB, Arrow, data plane or native module in any file, nothing left out', async () => {
    for (const kind of ['maintenance-sweep', 'maintenance-index'] as const) {
      const result = await build({ ...esbuildOptions(kind, `/tmp/rask-${kind}`), write: false, metafile: true, logLevel: 'silent' });
      const inputs = Object.keys(result.metafile!.inputs);
      // The fan-out path is there…
      for (const f of ['lib/maintenance/fan-out-passes.ts', 'lib/maintenance/fan-out.ts', 'lib/maintenance/table-checks.ts', 'lib/queue/jobs.ts']) expect(inputs, kind).toContain(f);
      // …and nothing that runs a table's work: lib/data (it loads LanceDB through createRequire,
      // invisible to the metafile), the passes' in-process bodies, the job runners.
      expect(inputs.filter((i) => /@lancedb|apache-arrow|\.node$/.test(i) || (i.startsWith('lib/data/') || i.startsWith('lib/adapters/lance/')) || i.startsWith('lib/jobs/runners/')), kind).toEqual([]);
      expect(inputs.filter((i) => ['lib/maintenance/sweep.ts', 'lib/maintenance/index-builder.ts', 'lib/maintenance/table-jobs.ts'].includes(i)), kind).toEqual([]);
      expect(forbiddenInputs(result.metafile!), kind).toEqual([]);
      // Every module the output imports at runtime is a Node built-in: nothing for a layer to supply.
      expect(externalImports(result.metafile!).filter((p) => !isBuiltin(p)), kind).toEqual([]);
      for (const file of result.outputFiles!) expect(/@lancedb\/lancedb|apache-arrow|\.node['"]/.test(file.text), `${kind} ${file.path}`).toBe(false);
    }
  });

  it('the change relay bundle reads manifests by name only: no LanceDB, Arrow or native module, nothing left out', async () => {
    const result = await build({ ...esbuildOptions('change-relay', '/tmp/rask-change-relay'), write: false, metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(result.metafile!.inputs);
    for (const f of ['lib/maintenance/change-relay.ts', 'lib/adapters/aws/object-change-log.ts', 'lib/adapters/aws/eventbridge-publisher.ts']) expect(inputs).toContain(f);
    expect(inputs.filter((i) => /@lancedb|apache-arrow|\.node$/.test(i) || i.startsWith('lib/data/') || i.startsWith('lib/adapters/lance/'))).toEqual([]);
    expect(forbiddenInputs(result.metafile!)).toEqual([]);
    expect(externalImports(result.metafile!).filter((p) => !isBuiltin(p))).toEqual([]);
  });

  it('authorizer bundle carries its own Secrets Manager client and nothing of the catalog', async () => {
    const { metafile } = await bundle('authorizer');
    expect(externalImports(metafile).filter((p) => !isBuiltin(p))).toEqual([]);
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.some((i) => i.includes('@aws-sdk/client-secrets-manager'))).toBe(true);
    expect(inputs.some((i) => i.includes('@lancedb') || i.includes('apache-arrow') || i.includes('lib/catalog'))).toBe(false);
  });
});
