import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys } from '../../lib/ports/object-store.js';
import { isJobId, newJobId } from '../../lib/queue/ids.js';
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

describe('compareKeys', () => {
  // Strings that mix ASCII, BMP units around the surrogate range and astral code points: where
  // UTF-16 unit order and UTF-8 byte order part.
  const unit = fc.constantFrom('a', 'z', '/', '-', '\u00e9', '\ud7ff', '\ue000', '\uff61', '\uffff', '\u{10000}', '\u{1f600}', '\u{10ffff}');
  const key = fc.array(unit, { maxLength: 6 }).map((parts) => parts.join(''));

  it('orders as the UTF-8 bytes do', () => {
    fc.assert(
      fc.property(key, key, (a, b) => Math.sign(compareKeys(a, b)) === Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))),
      { numRuns: 5000 },
    );
  });
});

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

describe('job keys', () => {
  const jobId = fc.date({ min: new Date(0), max: new Date('2999-12-31T00:00:00Z'), noInvalidDate: true }).map(newJobId);
  const project = anyName;

  it('hold job ids unescaped, each id in exactly one key per life stage, under its own prefix', () => {
    fc.assert(
      fc.property(project, jobId, jobId, (p, a, b) => {
        expect(isJobId(a)).toBe(true);
        const live = keys.liveJob(p, a);
        const done = keys.doneJob(p, a);
        expect(live).toBe(`${keys.liveJobsPrefix(p)}${a}`);
        expect(done).toBe(`${keys.doneJobsPrefix(p)}${a}`);
        expect(decodeSegment(live.slice(keys.liveJobsPrefix(p).length))).toBe(a);
        expect(live).not.toBe(done);
        if (a !== b) expect(keys.liveJob(p, a)).not.toBe(keys.liveJob(p, b));
      }),
      { numRuns: 1000 },
    );
  });

  it('list oldest first: key order is creation order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 44 }), fc.integer({ min: 1, max: 2 ** 40 }), (t, dt) => {
        const older = newJobId(new Date(t));
        const newer = newJobId(new Date(t + dt));
        expect(compareKeys(keys.liveJob('p', older), keys.liveJob('p', newer))).toBeLessThan(0);
      }),
      { numRuns: 1000 },
    );
  });

  it('never collide with the namespace tree, warehouses or location claims, and are leaves', () => {
    fc.assert(
      fc.property(project, jobId, fc.array(anyName, { minLength: 1, maxLength: 3 }), anyName, (p, id, tableId, w) => {
        for (const k of [keys.liveJob(p, id), keys.doneJob(p, id)]) {
          expect(k.startsWith(keys.subtree(p, []))).toBe(false);
          expect(parseTreeKey(p, k)).toBeUndefined();
          expect(k.startsWith(keys.locationClaimsPrefix(p))).toBe(false);
          expect(k.startsWith(keys.warehousesPrefix(p))).toBe(false);
          expect(k).not.toBe(keys.table(p, tableId));
          expect(k).not.toBe(keys.warehouse(p, w));
        }
        // Neither prefix contains the other's keys, and the two sets of jobs never mix.
        expect(keys.doneJob(p, id).startsWith(keys.liveJobsPrefix(p))).toBe(false);
        expect(keys.liveJob(p, id).startsWith(keys.doneJobsPrefix(p))).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('keep the projects apart', () => {
    fc.assert(
      fc.property(project, project, jobId, (p1, p2, id) => {
        if (p1 !== p2) expect(keys.liveJob(p1, id)).not.toBe(keys.liveJob(p2, id));
        if (p1 !== p2) expect(keys.liveJob(p2, id).startsWith(keys.liveJobsPrefix(p1))).toBe(false);
      }),
      { numRuns: 500 },
    );
    expect(keys.liveJob('default', '0123456789abcdef0123456789abcdef')).toBe('p/default/jobs/live/0123456789abcdef0123456789abcdef');
  });
});
