import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJsonDepth, checkProperties, DEFAULT_REQUEST_LIMITS } from '../../lib/http/limits.js';

/** The nesting depth JSON.parse would build: arrays and objects count, strings never do. */
function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (typeof v === 'object' && v !== null) return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

describe('checkJsonDepth (the pre-parse scan)', () => {
  it('agrees with the parsed depth for any JSON, brackets and escaped quotes inside strings included', () => {
    const tricky = fc.constantFrom('[', ']', '{', '}', '"', '\\', '\\"', 'a', 'é');
    const str = fc.array(tricky, { maxLength: 8 }).map((a) => a.join(''));
    const json = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, str, fc.integer(), fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(str, tie('v'), { maxKeys: 3 })),
    })).v;
    fc.assert(
      fc.property(json, (value) => {
        const bytes = Buffer.from(JSON.stringify(value), 'utf8');
        const d = depthOf(value);
        expect(() => checkJsonDepth(bytes, d)).not.toThrow();
        if (d > 0) expect(() => checkJsonDepth(bytes, d - 1)).toThrow(expect.objectContaining({ code: 13 }));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('checkProperties', () => {
  it('counts keys and values in UTF-8 bytes against both limits', () => {
    const limits = { ...DEFAULT_REQUEST_LIMITS, maxPropertiesBytes: 10, maxProperties: 2 };
    expect(() => checkProperties({ ab: 'cdé' }, 'properties', limits)).not.toThrow(); // 2 + 4 bytes
    expect(() => checkProperties({ ab: 'cdéfghij' }, 'properties', limits)).toThrow(/at most 10 bytes/);
    expect(() => checkProperties({ a: '', b: '', c: '' }, 'properties', limits)).toThrow(/at most 2 properties/);
    expect(() => checkProperties('not a map', 'properties', limits)).not.toThrow(); // the door says what shape it needs
  });
});
