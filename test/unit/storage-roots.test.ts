import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalRoot } from '../../lib/catalog/control/allotment.js';
import { childRoot, formatStorageRoot, parseStorageRoot, rootInside, rootSegments, rootsOverlap } from '../../lib/registry/storage-roots.js';

describe('warehouse storage roots', () => {
  it('parses s3://bucket/prefix and absolute directories, refusing anything else with code 13', () => {
    expect(parseStorageRoot('s3://my-bucket/teams/acme/')).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: 'teams/acme/' });
    expect(parseStorageRoot('s3://my-bucket')).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: '' });
    expect(parseStorageRoot('/data/w')).toEqual({ kind: 'file', path: '/data/w' });
    for (const bad of ['relative/dir', 's3://B/x', 's3://b', 's3://bucket/a//b', 's3://bucket/a/../b', '', 42]) {
      expect(() => parseStorageRoot(bad), String(bad)).toThrow(expect.objectContaining({ code: 13 }));
    }
    expect(formatStorageRoot(parseStorageRoot('s3://my-bucket/x'))).toBe('s3://my-bucket/x/');
  });

  it('overlap means same bucket and one prefix containing the other on whole segments', () => {
    const s3 = (t: string) => parseStorageRoot(t);
    expect(rootsOverlap(s3('s3://shared/a'), s3('s3://shared/a/b'))).toBe(true);
    expect(rootsOverlap(s3('s3://shared/a/b'), s3('s3://shared/a'))).toBe(true);
    expect(rootsOverlap(s3('s3://shared'), s3('s3://shared/anything'))).toBe(true);
    expect(rootsOverlap(s3('s3://shared/a'), s3('s3://shared/a'))).toBe(true);
    expect(rootsOverlap(s3('s3://shared/a'), s3('s3://shared/ab'))).toBe(false);
    expect(rootsOverlap(s3('s3://shared/a'), s3('s3://other/a'))).toBe(false);
    expect(rootsOverlap(s3('/d/a'), s3('/d/a/b'))).toBe(true);
    expect(rootsOverlap(s3('/d/a'), s3('/d/a-2'))).toBe(false);
    expect(rootsOverlap(s3('/ddd/a'), s3('s3://ddd/a'))).toBe(false);
  });
});

/**
 * The overlap predicate, property-tested (docs/protocols.md, "Storage roots never overlap"): it
 * decides whether a warehouse may be created and whether a deleting door may run, so it must
 * agree with the segment-wise definition for every spelling of a root.
 */
describe('rootsOverlap and rootInside, for every spelling', () => {
  // Short segments from a small alphabet, so shared prefixes (`ab` vs `abc`) come up often.
  const segment = fc.stringMatching(/^[ab.c-]{1,3}$/).filter((s) => s !== '.' && s !== '..');
  const segments = fc.array(segment, { maxLength: 4 });
  const bucket = fc.constantFrom('bkt', 'bkt2', 'bktx');
  const isPrefix = (a: readonly string[], b: readonly string[]) => a.length <= b.length && a.every((x, i) => x === b[i]);

  /** A file path for `segs` spelled with redundant `.`/`..`/slashes the resolver must remove. */
  const spelled = (segs: readonly string[], noise: number) =>
    '/' + segs.map((s, i) => ((noise >> i) & 1 ? `${s}/./` : (noise >> (i + 4)) & 1 ? `${s}/zz/../` : `${s}//`)).join('') + ((noise >> 8) & 1 ? '/' : '');

  it('file roots: overlap iff one segment list is a prefix of the other, however spelled', () => {
    fc.assert(
      fc.property(segments, segments, fc.nat(511), fc.nat(511), (a, b, na, nb) => {
        const ra = parseStorageRoot(spelled(a, na));
        const rb = parseStorageRoot(spelled(b, nb));
        expect(rootInside(ra, rb)).toBe(isPrefix(b, a));
        expect(rootsOverlap(ra, rb)).toBe(isPrefix(a, b) || isPrefix(b, a));
        expect(rootsOverlap(ra, rb)).toBe(rootsOverlap(rb, ra));
      }),
    );
  });

  it('s3 roots: same bucket and whole prefix segments; s3://b/ab never contains s3://b/abc', () => {
    fc.assert(
      fc.property(bucket, segments, bucket, segments, fc.boolean(), fc.boolean(), (ba, a, bb, b, slashA, slashB) => {
        const text = (bk: string, segs: readonly string[], slash: boolean) => `s3://${bk}${segs.length ? `/${segs.join('/')}${slash ? '/' : ''}` : ''}`;
        const ra = parseStorageRoot(text(ba, a, slashA));
        const rb = parseStorageRoot(text(bb, b, slashB));
        const expected = ba === bb && (isPrefix(a, b) || isPrefix(b, a));
        expect(rootsOverlap(ra, rb)).toBe(expected);
        expect(rootInside(ra, rb)).toBe(ba === bb && isPrefix(b, a));
        // A file root never overlaps an s3 one, whatever the names.
        expect(rootsOverlap(ra, parseStorageRoot(`/${ba}/${a.join('/')}`))).toBe(false);
      }),
    );
    const s3 = (t: string) => parseStorageRoot(t);
    expect(rootsOverlap(s3('s3://bk1/ab'), s3('s3://bk1/abc'))).toBe(false);
    expect(rootInside(s3('s3://bk1/abc'), s3('s3://bk1/ab'))).toBe(false);
    expect(rootInside(s3('s3://bk1/ab/c'), s3('s3://bk1/ab/'))).toBe(true);
  });

  it('a project allotment is one segment below its declared root', () => {
    fc.assert(
      fc.property(segments, segment, (base, p) => {
        for (const root of [parseStorageRoot(`/${base.join('/')}`), parseStorageRoot(`s3://bkt/${base.join('/')}`)]) {
          const child = childRoot(root, p);
          expect(rootInside(child, root)).toBe(true);
          expect(rootInside(root, child)).toBe(false);
          expect(rootSegments(child)).toEqual([...rootSegments(root), p]);
        }
      }),
    );
  });
});

describe('canonicalRoot follows symbolic links', () => {
  it('records a local root by its real path, so a link cannot carry a warehouse outside its allotment', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'rask-canon-'));
    try {
      await mkdir(path.join(dir, 'allot'));
      await mkdir(path.join(dir, 'etc'));
      await symlink(path.join(dir, 'etc'), path.join(dir, 'allot', 'link'));
      const real = await realpath(dir);
      expect(await canonicalRoot({ kind: 'file', path: path.join(dir, 'allot', 'link', 'x', 'y') })).toEqual({ kind: 'file', path: path.join(real, 'etc', 'x', 'y') });
      expect(await canonicalRoot({ kind: 'file', path: `${dir}/allot/../allot/new` })).toEqual({ kind: 'file', path: path.join(real, 'allot', 'new') });
      const s3 = parseStorageRoot('s3://bkt/a/b');
      expect(await canonicalRoot(s3)).toEqual(s3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
