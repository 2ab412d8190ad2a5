import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys } from '../../lib/ports/object-store.js';
import {
  decodeSegment,
  encodeSegment,
  keys,
  MAX_NAME_BYTES,
  parseLocationClaimKey,
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

describe('location claim keys', () => {
  // Location paths as relativeToRoot produces them: non-empty segments without `.`/`..`.
  const segment = anyName.filter((n) => !n.includes('/') && n !== '.' && n !== '..');
  const locationPath = fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('/'));
  const warehouse = anyName;

  it('round-trip to warehouse and path', () => {
    fc.assert(
      fc.property(warehouse, locationPath, (w, p) => {
        expect(parseLocationClaimKey('proj', keys.locationClaim('proj', w, p))).toEqual({ warehouse: w, path: p });
      }),
      { numRuns: 1000 },
    );
  });

  it('are injective over (warehouse, path) and never collide with the namespace tree', () => {
    fc.assert(
      fc.property(warehouse, locationPath, warehouse, locationPath, fc.array(anyName, { minLength: 1, maxLength: 3 }), (w1, p1, w2, p2, id) => {
        const k1 = keys.locationClaim('proj', w1, p1);
        const k2 = keys.locationClaim('proj', w2, p2);
        if (w1 !== w2 || p1 !== p2) expect(k1).not.toBe(k2);
        expect(k1.startsWith(keys.subtree('proj', []))).toBe(false);
        expect(parseTreeKey('proj', k1)).toBeUndefined();
        expect(k1).not.toBe(keys.table('proj', id));
      }),
      { numRuns: 1000 },
    );
  });

  it('are always leaves: no claim key is a directory of another, so the fs store can hold both', () => {
    fc.assert(
      fc.property(warehouse, locationPath, locationPath, (w, p1, p2) => {
        const k1 = keys.locationClaim('proj', w, p1);
        const k2 = keys.locationClaim('proj', w, p2);
        expect(k2.startsWith(`${k1}/`)).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it("list the claims nested below a location (and only those) under that location's directory", () => {
    fc.assert(
      fc.property(warehouse, locationPath, locationPath, (w, outer, other) => {
        const dir = keys.locationClaimDir('proj', w, outer);
        expect(keys.locationClaim('proj', w, `${outer}/${other}`).startsWith(dir)).toBe(true);
        expect(keys.locationClaim('proj', w, outer).startsWith(dir)).toBe(true);
        // A sibling sharing a name prefix (`a` and `ab`) is not below `a`.
        const inside = other === outer || other.startsWith(`${outer}/`);
        expect(keys.locationClaim('proj', w, other).startsWith(dir)).toBe(inside);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuse paths the registry cannot hold with code 13', () => {
    expect(() => keys.locationClaim('p', 'w', `tables/${'%'.repeat(90)}`)).toThrow(expect.objectContaining({ code: 13 }));
    expect(() => keys.locationClaim('p', 'w', 'a//b')).toThrow(expect.objectContaining({ code: 13 }));
    expect(() => keys.locationClaim('p', 'w', Array.from({ length: 40 }, () => 'x'.repeat(30)).join('/'))).toThrow(
      expect.objectContaining({ code: 13 }),
    );
    expect(keys.locationClaim('p', 'w', 'tables/ab12/t.lance')).toBe('p/p/loc/w/tables/ab12/t%2Elance/+c');
  });
});
