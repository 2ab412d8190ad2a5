import { describe, expect, it } from 'vitest';
import { formDecode, parseObjectId } from '../../lib/http/ids.js';

describe('object ids in paths', () => {
  it('form-decodes: + is a space, %24 the delimiter, %2F a slash inside a name', () => {
    expect(parseObjectId('a+b%24c%2Fd%24t.x', '$')).toEqual(['a b', 'c/d', 't.x']);
    expect(parseObjectId('my%2Btable', '$')).toEqual(['my+table']);
  });

  it('reads the root namespace written as the delimiter', () => {
    expect(parseObjectId('%24', '$')).toEqual([]);
    expect(parseObjectId('%3A%3A', '::')).toEqual([]);
  });

  it('splits on multi-character delimiters and drops empty parts', () => {
    expect(parseObjectId('a%3A%3Ab', '::')).toEqual(['a', 'b']);
    expect(parseObjectId('a.b', '.')).toEqual(['a', 'b']);
    expect(parseObjectId('%24a%24%24b%24', '$')).toEqual(['a', 'b']);
  });

  it('decodes UTF-8 and refuses malformed escapes with code 13', () => {
    expect(parseObjectId('caf%C3%A9', '$')).toEqual(['café']);
    expect(() => formDecode('%E0%A4%A', 'object id')).toThrow(expect.objectContaining({ code: 13 }));
  });
});
