/**
 * The floor plan of lib/ (docs/architecture.md, "The floors"): every folder (and every file at
 * lib/'s top) sits on one floor, and a module may import only from its own folder or from a
 * lower floor — type imports included, since a type import ties the lower floor's vocabulary to
 * the higher floor's wiring as surely as a value import does. The import graph is read from the
 * sources with TypeScript's own pre-processor (static, dynamic and type imports alike); the
 * runtime cycle check is import-cycles.test.ts, and the file-level cycle check below adds the
 * type imports it cannot see.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** Bottom to top. Folders on one floor must not import each other. */
export const FLOORS: readonly (readonly string[])[] = [
  ['errors', 'concurrency', 'deadline', 'signals', 'trace'],
  ['contract'],
  ['events', 'data'],
  ['ports'],
  ['http'],
  ['config'],
  ['registry'],
  ['queue', 'auth'],
  ['catalog', 'adapters'],
  ['governance', 'jobs'],
  ['maintenance', 'observability'],
  ['operations'],
  ['app'],
];

/** A lib/ file's room: its top folder, or its own name for files at lib/'s top (`lib/errors.ts` → `errors`). */
export function roomOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1]! : parts[1]!.replace(/\.ts$/, '');
}

export interface Edge {
  readonly from: string;
  readonly to: string;
  readonly specifier: string;
}

/** Every import between lib/ modules, type-only and dynamic ones included. */
export function libEdges(root = 'lib'): Edge[] {
  const files = (readdirSync(root, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.posix.join(root, f.split(path.sep).join('/')));
  const edges: Edge[] = [];
  for (const from of files) {
    const info = ts.preProcessFile(readFileSync(from, 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = path.posix.normalize(path.posix.join(path.posix.dirname(from), fileName)).replace(/\.js$/, '.ts');
      edges.push({ from, to, specifier: fileName });
    }
  }
  return edges;
}

/** Each import that climbs (or crosses to another folder on its own floor), as a readable line. */
export function violations(edges: readonly Edge[], floors: readonly (readonly string[])[]): string[] {
  const floorOf = new Map(floors.flatMap((rooms, i) => rooms.map((room) => [room, i] as const)));
  const out: string[] = [];
  for (const { from, to, specifier } of edges) {
    const a = roomOf(from);
    const b = roomOf(to);
    if (a === b) continue;
    const fa = floorOf.get(a);
    const fb = floorOf.get(b);
    if (fa === undefined || fb === undefined) {
      out.push(`${from}: '${specifier}' — ${fa === undefined ? a : b} is on no floor (add it to FLOORS)`);
    } else if (fb >= fa) {
      out.push(`${from}: '${specifier}' — ${a} (floor ${fa}) imports ${b} (floor ${fb})`);
    }
  }
  return out;
}

/** One file-level cycle as the path that closes it, or undefined. */
export function fileCycle(edges: readonly Edge[]): string[] | undefined {
  const graph = new Map<string, string[]>();
  for (const { from, to } of edges) graph.set(from, [...(graph.get(from) ?? []), to]);
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...trail.slice(trail.indexOf(node)), node];
    state.set(node, 'open');
    trail.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('the floor plan of lib/', () => {
  const edges = libEdges();

  it('reads the real graph (type imports included)', () => {
    expect(edges.length).toBeGreaterThan(500);
    // A type-only import the runtime graph never sees: the port's value type.
    expect(edges).toContainEqual(expect.objectContaining({ from: 'lib/ports/work-queue.ts', to: 'lib/ports/job-record.ts' }));
  });

  it('puts every room on exactly one floor', () => {
    const rooms = new Set(edges.flatMap((e) => [roomOf(e.from), roomOf(e.to)]));
    const placed = FLOORS.flat();
    expect(new Set(placed).size).toBe(placed.length);
    expect([...rooms].filter((r) => !placed.includes(r))).toEqual([]);
  });

  it('has no import against the order', () => {
    expect(violations(edges, FLOORS)).toEqual([]);
  });

  it('has no circle between files, type imports included', () => {
    expect(fileCycle(edges)).toBeUndefined();
  });

  it('fails on an import against the order, naming file, import and floors (the check can fail)', () => {
    const climbing: Edge = { from: 'lib/ports/work-queue.ts', to: 'lib/queue/store.ts', specifier: '../queue/store.js' };
    const sideways: Edge = { from: 'lib/catalog/namespaces/drop.ts', to: 'lib/adapters/aws/s3-object-store.ts', specifier: '../../adapters/aws/s3-object-store.js' };
    expect(violations([climbing, sideways], FLOORS)).toEqual([
      "lib/ports/work-queue.ts: '../queue/store.js' — ports (floor 3) imports queue (floor 7)",
      "lib/catalog/namespaces/drop.ts: '../../adapters/aws/s3-object-store.js' — catalog (floor 8) imports adapters (floor 8)",
    ]);
    expect(fileCycle([climbing, { from: 'lib/queue/store.ts', to: 'lib/ports/work-queue.ts', specifier: '' }])).toEqual([
      'lib/ports/work-queue.ts',
      'lib/queue/store.ts',
      'lib/ports/work-queue.ts',
    ]);
  });
});
