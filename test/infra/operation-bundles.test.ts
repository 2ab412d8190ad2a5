/**
 * Per-operation mode's code (infra/operation-bundles.ts): one asset per bundle, an entry per
 * operation, built together with code splitting. What an entry loads at a cold start is its own
 * handler module and what that reaches, never another operation's handler module; the policy
 * engine is in the asset once; the data entries leave LanceDB to the layer.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAYER_MODULES, POLICY_ENGINE_MODULE } from '../../infra/bundling.js';
import { staticClosure } from '../../infra/measure-bundle.js';
import { bundleOperations } from '../../infra/operation-bundles.js';
import { handlerModuleOf, operationHandler, perOperationDefs } from '../../infra/operation-entries.js';
import { HANDLER_EXPORTS, type OperationDef } from '../../lib/contract/operations.js';

const HANDLER_MODULES = Object.keys(HANDLER_EXPORTS);
const built = new Map<'meta' | 'data', { outdir: string; metafile: Metafile }>();

beforeAll(() => {
  for (const bundle of ['meta', 'data'] as const) {
    const outdir = mkdtempSync(path.join(tmpdir(), `rask-operations-${bundle}-`));
    built.set(bundle, { outdir, ...bundleOperations(bundle, outdir) });
  }
}, 300_000);
afterAll(() => {
  for (const { outdir } of built.values()) rmSync(outdir, { recursive: true, force: true });
});

/** The source modules the entry of `operationId` loads before its first request. */
function eagerInputs(op: OperationDef): Set<string> {
  const { outdir, metafile } = built.get(op.bundle)!;
  const closure = staticClosure(metafile, path.join(outdir, `${op.operationId}.mjs`));
  expect(closure.length, op.operationId).toBeGreaterThan(0);
  return new Set(closure.flatMap((o) => Object.keys(metafile.outputs[o].inputs)));
}

describe('per-operation mode: one shared asset per bundle', () => {
  it('holds an entry for every operation of the bundle, named by its handler, and nothing for the other bundle', () => {
    for (const bundle of ['meta', 'data'] as const) {
      const { outdir } = built.get(bundle)!;
      const entries = readdirSync(outdir).filter((f) => f.endsWith('.mjs'));
      const expected = perOperationDefs().filter((op) => op.bundle === bundle);
      expect(entries.sort()).toEqual(expected.map((op) => `${op.operationId}.mjs`).sort());
      for (const op of expected) expect(operationHandler(op)).toBe(`${op.operationId}.handler`);
    }
  });

  it("an entry loads its own handler module and no other operation's", () => {
    for (const op of perOperationDefs()) {
      const inputs = eagerInputs(op);
      const own = handlerModuleOf(op.operationId)!.file;
      expect(inputs, op.operationId).toContain(own);
      expect([...inputs].filter((i) => HANDLER_MODULES.includes(i) && i !== own), op.operationId).toEqual([]);
    }
  });

  it('the metadata entries never reach LanceDB or a data handler; the data asset leaves LanceDB and Arrow to the layer', () => {
    const meta = built.get('meta')!.metafile;
    expect(Object.keys(meta.inputs).filter((i) => i.includes('@lancedb') || i.startsWith('lib/operations/data/'))).toEqual([]);
    const data = built.get('data')!.metafile;
    expect(Object.keys(data.inputs).filter((i) => i.startsWith('lib/operations/data/')).length).toBeGreaterThan(0);
    for (const name of LAYER_MODULES) expect(Object.keys(data.inputs).filter((i) => i.includes(`node_modules/${name}/`)), name).toEqual([]);
  });

  it('carries the policy engine once, as an installed package beside the entries', () => {
    for (const bundle of ['meta', 'data'] as const) {
      const { outdir } = built.get(bundle)!;
      expect(existsSync(path.join(outdir, 'node_modules', POLICY_ENGINE_MODULE, 'package.json'))).toBe(true);
      const wasm = readdirSync(outdir, { recursive: true }).map(String).filter((f) => f.endsWith('.wasm'));
      expect(wasm, bundle).toHaveLength(1);
    }
  });
});
