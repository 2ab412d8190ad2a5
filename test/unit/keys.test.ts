import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys } from '../../lib/ports/object-store.js';
import {
  decodeSegment,
  encodeSegment,
  keys,
  MAX_NAME_BYTES,
  parseTreeKey,
  validateName,
} from '../../lib/registry/keys.js';

const validName = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 30 })
  .filter((s) => {
    try {
      validateName('table', s);
      return true;
    } catch {
      return false;
    }
  });
const nastyName = fc
  .array(fc.constantFrom('a', 'B', ' ', '.', '/', '%', '+', '$', '-', '_', '0', 'é', '~', '!', '\u{1F600}', '\uFF61'), {
    minLength: 1,
    maxLength: 12,
  })
  .map((a) => a.join(''));
const anyName = fc.oneof(validName, nastyName);

describe('registry key encoding', () => {
  it('round-trips every valid name', () => {
    fc.assert(fc.property(anyName, (n) => decodeSegment(encodeSegment(n)) === n), { numRuns: 2000 });
  });

  it('is injective', () => {
    fc.assert(
      fc.property(anyName, anyName, (a, b) => a === b || encodeSegment(a) !== encodeSegment(b)),
      { numRuns: 2000 },
    );
  });

  it('preserves the byte order of names', () => {
    fc.assert(
      fc.property(anyName, anyName, (a, b) => Math.sign(compareKeys(a, b)) === Math.sign(compareKeys(encodeSegment(a), encodeSegment(b)))),
      { numRuns: 3000 },
    );
  });

  it('never produces a separator, a dot segment or the +n/+t markers', () => {
    fc.assert(
      fc.property(anyName, (n) => {
        const e = encodeSegment(n);
        return !e.includes('/') && !e.includes('+') && e !== '.' && e !== '..' && !e.startsWith('.');
      }),
      { numRuns: 2000 },
    );
  });

  it('gives distinct ids distinct keys and parses them back', () => {
    fc.assert(
      fc.property(fc.array(anyName, { minLength: 1, maxLength: 4 }), fc.array(anyName, { minLength: 1, maxLength: 4 }), (a, b) => {
        const ka = keys.namespace('p', a);
        const kb = keys.table('p', b);
        expect(ka).not.toBe(kb);
        expect(parseTreeKey('p', ka)).toEqual({ kind: 'namespace', id: a });
        expect(parseTreeKey('p', kb)).toEqual({ kind: 'table', id: b });
        if (a.join('\u0000') !== b.join('\u0000')) expect(keys.namespace('p', a)).not.toBe(keys.namespace('p', b));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps a namespace record out of its own children directory', () => {
    expect(keys.namespace('p', ['a', 'b'])).toBe('p/p/t/a/+n/b');
    expect(keys.childNamespacesPrefix('p', ['a', 'b'])).toBe('p/p/t/a/b/+n/');
    expect(keys.table('p', ['a', 't'])).toBe('p/p/t/a/+t/t');
    expect(keys.subtree('p', [' x'])).toBe('p/p/t/%20x/');
  });

  it('refuses invalid names with code 13 and says what is allowed', () => {
    for (const bad of ['', 'a\u0000b', 'tab\there', 'x'.repeat(MAX_NAME_BYTES + 1), '\uD800']) {
      expect(() => validateName('table', bad)).toThrow(expect.objectContaining({ code: 13 }));
    }
    expect(() => validateName('table', 'x'.repeat(MAX_NAME_BYTES + 1))).toThrow(/1 to 80 bytes/);
  });

  it('refuses keys that would exceed the S3 key limit', () => {
    const deep = Array.from({ length: 20 }, () => '%'.repeat(MAX_NAME_BYTES / 2));
    expect(() => keys.namespace('p', deep)).toThrow(expect.objectContaining({ code: 13 }));
  });
});
