import { describe, expect, it } from 'vitest';
import { formatStorageRoot, parseStorageRoot, rootsOverlap } from '../../lib/registry/storage-roots.js';

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
