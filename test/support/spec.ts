import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** The vendored spec, parsed: the tests read operation lists and codes from it, not from us. */
export const spec = parse(
  readFileSync(new URL('../../spec/lance-namespace-spec-0.11.1.yaml', import.meta.url), 'utf8'),
) as {
  paths: Record<string, Record<string, { operationId?: string }>>;
  components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> };
};

export interface SpecOperation {
  operationId: string;
  method: string;
  path: string;
}

export const specOperations: SpecOperation[] = Object.entries(spec.paths).flatMap(([path, methods]) =>
  Object.entries(methods)
    .filter(([, op]) => typeof op === 'object' && op !== null && 'operationId' in op)
    .map(([method, op]) => ({ operationId: op.operationId as string, method: method.toUpperCase(), path })),
);

/** `N - Name: text` lines of ErrorResponse.code's description. */
export const specErrorCodes: { code: number; name: string }[] = (
  spec.components.schemas.ErrorResponse.properties?.code.description ?? ''
)
  .split('\n')
  .map((line) => /^\s*(\d+)\s*-\s*(\w+):/.exec(line))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => ({ code: Number(m[1]), name: m[2] }));
