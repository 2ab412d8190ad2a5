/**
 * The zod field schemas of lib/operations/decode.ts answer exactly as the readers of
 * lib/catalog/params.ts that the control-plane doors used before they decoded with zod: same
 * value, or a 400 with the same message (issue 25, "one shape per operation": no wire change).
 */
import { describe, expect, it } from 'vitest';
import * as params from '../../lib/catalog/params.js';
import { decode, optionalBoolean, optionalInteger, optionalString, optionalStringArray, pageLimit, stringMap } from '../../lib/operations/decode.js';
import { InvalidInputError } from '../../lib/errors.js';
import type { Schema } from '../../lib/operations/decode.js';

const VALUES: unknown[] = [
  undefined, null, '', ' ', 'x', 'true', 'false', 'TRUE', '0', '7', ' 7 ', '-3', '1.5', '99999999999999999999', '1e3',
  0, 7, -3, 1.5, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY, true, false, [], ['a'], ['a', 1], [null], {}, { a: 'b' }, { a: 1 }, { a: 'b', c: null },
];

function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (err) {
    return { error: (err as Error).message, code: (err as { code?: number }).code };
  }
}

/** The reader the lifecycle doors had (lib/operations/handlers-lifecycle.ts before zod). */
function oldStringArray(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new InvalidInputError(`${field} must be an array of strings`);
  return value as string[];
}

const cases: [string, (v: unknown) => unknown, Schema<unknown>][] = [
  ['optionalString', (v) => params.optionalString(v, 'f'), optionalString('f')],
  ['optionalBoolean', (v) => params.optionalBoolean(v, 'f'), optionalBoolean('f')],
  ['optionalInteger', (v) => params.optionalInteger(v, 'f'), optionalInteger('f')],
  ['optionalInteger min 0', (v) => params.optionalInteger(v, 'f', { min: 0 }), optionalInteger('f', { min: 0 })],
  ['stringMap', (v) => params.stringMap(v, 'f'), stringMap('f')],
  ['optionalStringArray', (v) => oldStringArray(v, 'f'), optionalStringArray('f')],
  ['pageLimit', (v) => params.pageLimit(v), pageLimit],
];

describe('decode fields', () => {
  for (const [name, reader, schema] of cases) {
    it(`${name} answers as lib/catalog/params.ts does`, () => {
      for (const v of VALUES) {
        expect(outcome(() => decode(schema, v)), `${name}(${JSON.stringify(v)})`).toEqual(outcome(() => reader(v)));
      }
    });
  }
});
