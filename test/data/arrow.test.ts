import { describe, expect, it } from 'vitest';
import {
  decodeIpc,
  loadArrow,
  encodeIpcFile,
  fromJsonArrowField,
  fromJsonArrowSchema,
  fromJsonArrowType,
  toJsonArrowField,
  toJsonArrowSchema,
} from '../../lib/data/arrow.js';
import { localPathInside, parseLocation } from '../../lib/data/location.js';
import { splitFieldPath } from '../../lib/data/names.js';
import { parseDuration } from '../../lib/data/validate.js';
import { ErrorCode, InvalidInputError } from '../../lib/errors.js';
import { ipcRows, schema } from './fixtures.js';

const arrow = loadArrow();

describe('decodeIpc / encodeIpcFile', () => {
  it('decodes streams and files into the CJS Arrow copy that LanceDB uses', () => {
    for (const format of ['stream', 'file'] as const) {
      const table = decodeIpc(ipcRows(4, 0, format));
      expect(table.numRows).toBe(4);
      expect(table).toBeInstanceOf(arrow.Table);
    }
  });

  it.each([
    ['empty bytes', Buffer.alloc(0)],
    ['text', Buffer.from('hello, this is not Arrow at all')],
    ['JSON (decodes to a table with no columns)', Buffer.from('{"a":1}')],
    ['a truncated stream', ipcRows(4).subarray(0, 100)],
    ['a truncated file', ipcRows(4, 0, 'file').subarray(0, 200)],
  ])('rejects %s with InvalidInput', (_label, bytes) => {
    expect(() => decodeIpc(bytes)).toThrow(InvalidInputError);
  });

  it('accepts unnamed list children and refuses unnamed struct children with InvalidInput, never a TypeError', () => {
    const ipc = (t: Parameters<typeof arrow.tableToIPC>[0]) => Buffer.from(arrow.tableToIPC(t, 'stream'));
    const lists = arrow.tableFromArrays({ id: Int32Array.from([1, 2]), tags: [[1, 2], [3]] });
    expect(decodeIpc(ipc(lists)).numRows).toBe(2);
    for (const name of ['', null]) {
      const child = new arrow.Field(name as string, new arrow.Utf8(), true);
      const struct = new arrow.Table(new arrow.Schema([new arrow.Field('s', new arrow.Struct([child]), true)]));
      expect(() => decodeIpc(ipc(struct))).toThrow(/column name must not be empty/);
    }
  });

  it('encodes an IPC file that round-trips', () => {
    const bytes = encodeIpcFile(decodeIpc(ipcRows(3)));
    expect(bytes.subarray(0, 6).toString()).toBe('ARROW1');
    expect(arrow.tableFromIPC(bytes).numRows).toBe(3);
  });
});

describe('JSON Arrow schema', () => {
  it('describes the fixture schema with lance-namespace type names', () => {
    const json = toJsonArrowSchema(decodeIpc(ipcRows(1)).schema);
    expect(json.fields.map((f) => f.type.type)).toEqual(['int64', 'utf8', 'list', 'fixed_size_list']);
    expect(json.fields[3].type.length).toBe(8);
    expect(json.metadata).toBeUndefined();
  });

  it('round-trips fields through the JSON form', () => {
    for (const field of decodeIpc(ipcRows(1)).schema.fields) {
      const back = fromJsonArrowField(toJsonArrowField(field));
      expect(toJsonArrowField(back)).toEqual(toJsonArrowField(field));
      expect(String(back.type)).toBe(String(schema.fields.find((f) => f.name === field.name)!.type));
    }
    const types = ['bool', 'int8', 'uint16', 'int32', 'uint64', 'float16', 'float64', 'large_utf8', 'binary', 'large_binary', 'date32', 'date64'];
    for (const type of types) expect(toJsonArrowType(type)).toEqual({ type });
    expect(toJsonArrowField(fromJsonArrowField({ name: 's', nullable: true, type: { type: 'struct', fields: [{ name: 'a', nullable: false, type: { type: 'double' } }] } })))
      .toEqual({ name: 's', nullable: true, type: { type: 'struct', fields: [{ name: 'a', nullable: false, type: { type: 'float64' } }] } });
  });

  it('round-trips a whole schema, metadata included', () => {
    const json = { fields: toJsonArrowSchema(decodeIpc(ipcRows(1)).schema).fields, metadata: { owner: 'rask' } };
    const back = fromJsonArrowSchema(json);
    expect(back).toBeInstanceOf(arrow.Schema);
    expect(toJsonArrowSchema(back)).toEqual(json);
    expect(() => fromJsonArrowSchema({})).toThrow(InvalidInputError);
  });

  it('rejects unknown or incomplete JSON types with InvalidInput', () => {
    for (const bad of [null, {}, { type: 'nope' }, { type: 'fixed_size_list', fields: [] }, { type: 'fixed_size_list', length: 0, fields: [{ name: 'i', nullable: true, type: { type: 'int8' } }] }]) {
      expect(() => fromJsonArrowType(bad)).toThrow(InvalidInputError);
    }
  });
});

function toJsonArrowType(type: string) {
  return toJsonArrowField(new arrow.Field('x', fromJsonArrowType({ type }), true)).type;
}

describe('parseLocation', () => {
  it('splits local and object-store locations into connection parent and table name', () => {
    expect(parseLocation('/data/wh/ns/t1.lance/')).toEqual({ parent: '/data/wh/ns', name: 't1', uri: '/data/wh/ns/t1.lance' });
    expect(parseLocation('/t.lance')).toMatchObject({ parent: '/', name: 't' });
    expect(parseLocation('s3://bucket/prefix/a-b_c.d.lance')).toEqual({ parent: 's3://bucket/prefix', name: 'a-b_c.d', uri: 's3://bucket/prefix/a-b_c.d.lance' });
    expect(parseLocation('s3://bucket/t.lance').parent).toBe('s3://bucket');
  });

  it.each(['', 'rel/t.lance', '/data/t', '/data/.lance', '/data/a$b.lance', 's3://bucket', 's3:///t.lance'])('rejects %j', (loc) => {
    expect(() => parseLocation(loc)).toThrow(InvalidInputError);
  });

  it('maps files inside local tables only', () => {
    expect(localPathInside(parseLocation('/d/t.lance'), '_refs/x.json')).toBe('/d/t.lance/_refs/x.json');
    expect(localPathInside(parseLocation('s3://b/t.lance'), '_refs/x.json')).toBeUndefined();
  });
});

describe('small parsers', () => {
  it('splits Lance field paths, honouring backtick quoting', () => {
    expect(splitFieldPath('a')).toEqual(['a']);
    expect(splitFieldPath('a.b.c')).toEqual(['a', 'b', 'c']);
    expect(splitFieldPath('`a.b`.c')).toEqual(['a.b', 'c']);
    expect(splitFieldPath('x.`we``ird`')).toEqual(['x', 'we`ird']);
  });

  it('parses merge-insert timeouts', () => {
    expect(parseDuration('30s', 't')).toBe(30_000);
    expect(parseDuration('1h30m', 't')).toBe(5_400_000);
    expect(parseDuration('250ms', 't')).toBe(250);
    expect(parseDuration(undefined, 't')).toBeUndefined();
    expect(() => parseDuration('soon', 't')).toThrow(expect.objectContaining({ code: ErrorCode.InvalidInput }));
  });
});
