import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

interface Spec {
  paths: Record<string, Record<string, { operationId?: string }>>;
  components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> };
}

const load = (file: string) => parse(readFileSync(new URL(`../../spec/${file}`, import.meta.url), 'utf8')) as Spec;

/** The vendored spec, parsed: the tests read operation lists and codes from it, not from us. */
export const spec = load('lance-namespace-spec-0.11.1.yaml');

/**
 * Every vendored version: 0.11.1 (what rask implements) and the spec's main branch after it,
 * whose wire changes newer clients already send (composite `on`, optional vector, `order_by`).
 */
export const specVersions: { name: string; spec: Spec }[] = [
  { name: '0.11.1', spec },
  { name: 'main 2026-09', spec: load('lance-namespace-spec-main-2026-09.yaml') },
];

export interface SpecOperation {
  operationId: string;
  method: string;
  path: string;
}

export function operationsOf(s: Spec): SpecOperation[] {
  return Object.entries(s.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, op]) => typeof op === 'object' && op !== null && 'operationId' in op)
      .map(([method, op]) => ({ operationId: op.operationId as string, method: method.toUpperCase(), path })),
  );
}

export const specOperations: SpecOperation[] = operationsOf(spec);

/** `N - Name: text` lines of ErrorResponse.code's description. */
export const specErrorCodes: { code: number; name: string }[] = (
  spec.components.schemas.ErrorResponse.properties?.code.description ?? ''
)
  .split('\n')
  .map((line) => /^\s*(\d+)\s*-\s*(\w+):/.exec(line))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => ({ code: Number(m[1]), name: m[2] }));
