/**
 * The modules under lib/ import each other without cycles, checked on the real module graph:
 * esbuild bundles every module of lib/ as an entry point in memory, and its metafile lists each
 * module's runtime imports (type-only imports are gone by then, as they are at run time). A cycle
 * makes load order matter and layers meaningless; catalog/namespaces and catalog/tables/* used to
 * import each other through the cascade and the undrop.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { metafileOf } from '../support/metafile.js';

async function libGraph(): Promise<Map<string, string[]>> {
  const entryPoints = (readdirSync('lib', { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => `lib/${f}`);
  const metafile = await metafileOf(entryPoints, { packages: 'external' });
  const graph = new Map<string, string[]>();
  for (const [file, input] of Object.entries(metafile.inputs)) {
    if (!file.startsWith('lib/')) continue;
    graph.set(file, input.imports.map((i) => i.path).filter((p) => p.startsWith('lib/')));
  }
  return graph;
}

/** One cycle of `graph` as the path that closes it, or undefined. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('the module graph of lib/', () => {
  it('has no import cycle', async () => {
    const graph = await libGraph();
    expect(graph.has('lib/catalog/namespaces/drop.ts')).toBe(true);
    expect(graph.has('lib/adapters/lance/engine.ts')).toBe(true);
    expect(findCycle(graph)).toBeUndefined();
  });

  it('finds a cycle when there is one (the check can fail)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(findCycle(graph)).toEqual(['a', 'b', 'c', 'a']);
  });
});
