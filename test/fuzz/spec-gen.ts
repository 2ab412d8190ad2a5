/**
 * A seeded generator of requests that are valid against the vendored spec's own request
 * schemas (issue #8, defect 10): for each of the 54 operations, a path id, the query
 * parameters the spec declares and a JSON body built from its request schema (or an Arrow body
 * for the Arrow operations). Values are drawn from pools aimed at the world of world.ts
 * (existing namespaces, tables, columns, tags, indices) mixed with awkward but schema-valid
 * values (long, non-ASCII, control characters, dots, path-like strings, extreme integers), so
 * a request reaches deep into the server instead of failing on a missing table.
 */
import { Field, Float64, Int64, Schema, Struct, Table, tableFromArrays, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { ipcRows } from '../data/fixtures.js';
import { prng } from '../support/prng.js';
import { spec } from '../support/spec.js';

type SchemaNode = Record<string, any>;

export interface GeneratedRequest {
  readonly operationId: string;
  readonly method: string;
  readonly rawPath: string;
  readonly query: string;
  readonly body: Buffer | object | undefined;
}

const AWKWARD = ['', 'a', 'Æ1', 'x'.repeat(300), 'a b', '../../x', 'a\u0001b', '%2F', 'null', '🙂', 'a.b', '$', 'a/b', ' '];
const COLUMNS = ['id', 'text', 'vec', 'labels', 'nope', 'a.b', 'text.x', '`a.b`', 'doubled'];
const SQL = [
  'id > 10',
  'id < 5 OR id = 300',
  "text LIKE 'apple%'",
  'id / 0 > 1',
  "id + 'x' > 1",
  '"text" = FALSE',
  'nope = 1',
  'id IN (1, 2, 3)',
  'true',
  'id >',
  `id${' + 1'.repeat(800)} > 0`,
  Array.from({ length: 800 }, (_, i) => `id = ${i}`).join(' OR '),
  `${'('.repeat(40)}id > 0${')'.repeat(40)}`,
  'id IS NULL',
  'id * 2',
  "'x'",
];
const TAGS = ['v1', 'v1', 'v2', 'nope'];
const BRANCHES = ['main', 'main', 'main', 'b1', 'b1', 'nope', 'b2'];
const INDEXES = ['id_idx', 'vec_idx', 'nope'];
const NAMESPACES = ['w1', 'w1$sub', 'w2', 'nope', '$', 'w2$scratch'];
const TABLES = ['w1$t1', 'w1$t1', 'w1$t1', 'w1$sub$t3', 'w1$sub$t3', 'w2$d', 'w2$s1', 'w2$s2', 'nope$t', 'w1$nope'];
/**
 * Targets for operations that remove or reshape whole objects, so the seeded tables keep their
 * shape for the rest of the run (the scratch tables are re-created between batches).
 */
export const SCRATCH_TABLES = ['w2$s1', 'w2$s2', 'w2$s3', 'w2$d', 'nope$t'];
const SCRATCH_NAMESPACES = ['w2$scratch', 'w3', 'nope'];
const DESTRUCTIVE = new Set([
  'DropNamespace',
  'DropTable',
  'DeregisterTable',
  'RenameTable',
  'AlterTableDropColumns',
  'AlterTableAlterColumns',
  'RestoreTable',
  'BatchDeleteTableVersions',
  'DropTableIndex',
  'DeleteTableTag',
  'DeleteTableBranch',
  'CreateTable',
  'BatchCommitTables',
  'BatchCreateTableVersions',
  'RegisterTable',
  'DeleteFromTable',
]);

function resolve(node: SchemaNode | undefined): SchemaNode {
  let n = node ?? {};
  for (let i = 0; i < 10 && typeof n.$ref === 'string'; i++) {
    const name = n.$ref.split('/').pop()!;
    n = n.$ref.includes('/parameters/') ? (spec as any).components.parameters[name] : (spec.components.schemas as any)[name];
  }
  return n ?? {};
}

export class RequestGenerator {
  private readonly rand: () => number;
  private counter = 0;

  constructor(seed: number) {
    this.rand = prng(seed);
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.rand() * list.length)];
  }

  private chance(p: number): boolean {
    return this.rand() < p;
  }

  /** Every operation of the spec, as [method, path template, operation, path-level parameters]. */
  readonly operations = Object.entries(spec.paths).flatMap(([template, item]) =>
    Object.entries(item as Record<string, any>)
      .filter(([, op]) => typeof op === 'object' && op !== null && 'operationId' in op)
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        template,
        op: op as SchemaNode,
        parameters: [...(((item as any).parameters ?? []) as SchemaNode[]), ...((op.parameters ?? []) as SchemaNode[])].map(resolve),
      })),
  );

  next(): GeneratedRequest {
    const entry = this.pick(this.operations);
    return this.forOperation(entry);
  }

  forOperation(entry: RequestGenerator['operations'][number]): GeneratedRequest {
    const opId = entry.op.operationId as string;
    const destructive = DESTRUCTIVE.has(opId);
    const isNamespace = entry.template.startsWith('/v1/namespace/');
    const id = isNamespace
      ? this.pick(destructive ? SCRATCH_NAMESPACES : NAMESPACES)
      : entry.template.startsWith('/v1/transaction/')
        ? this.pick(['nope', '00000000-0000-0000-0000-000000000000', 'a b'])
        : this.chance(0.1)
          ? `w2$n${this.counter++}`
          : this.pick(destructive ? SCRATCH_TABLES : TABLES);
    const encodedId = id === '$' ? '%24' : id.split('$').map(encodeURIComponent).join('%24');
    const rawPath = entry.template
      .replace('{id}', encodedId)
      .replace('{index_name}', encodeURIComponent(this.pick(INDEXES)));

    const query = new URLSearchParams();
    for (const p of entry.parameters) {
      if (p.in !== 'query' || p.name === 'delimiter' || !this.chance(0.5)) continue;
      const value = this.value(resolve(p.schema), p.name, 0);
      if (value === undefined || value === null) continue;
      if (p.name === 'on') {
        for (const c of this.chance(0.8) ? ['id'] : [this.pick(COLUMNS)]) query.append('on', c);
      } else query.set(p.name, typeof value === 'object' ? JSON.stringify(value) : String(value));
    }

    const content = entry.op.requestBody?.content ?? {};
    let body: Buffer | object | undefined;
    if (content['application/vnd.apache.arrow.stream']) body = this.arrowBody();
    else if (content['application/json']) body = this.value(resolve(content['application/json'].schema), '', 0) ?? {};
    if (body && !Buffer.isBuffer(body) && typeof body === 'object') delete (body as Record<string, unknown>).id;
    return { operationId: opId, method: entry.method, rawPath, query: query.toString(), body };
  }

  private arrowBody(): Buffer {
    const r = this.rand();
    if (r < 0.5) return ipcRows(1 + Math.floor(this.rand() * 5), 1000 + Math.floor(this.rand() * 1000));
    if (r < 0.6) return Buffer.from(tableToIPC(new Table({ id: vectorFromArray([1n, 2n], new Int64()) }), 'stream'));
    if (r < 0.7) return Buffer.from(tableToIPC(new Table({ [this.pick(AWKWARD) || 'x']: vectorFromArray([1.5], new Float64()) }), 'stream'));
    if (r < 0.8) {
      let type: any = new Utf8();
      const depth = 1 + Math.floor(this.rand() * 80);
      for (let i = 0; i < depth; i++) type = new Struct([new Field(`f${i}`, type, true)]);
      return Buffer.from(tableToIPC(new Table(new Schema([new Field('s', type, true)])), 'stream'));
    }
    if (r < 0.84) {
      // Nested columns with unnamed children: lists as tableFromArrays builds them (each child has
      // a null name) — flat, a list of lists, a list inside a struct and structs inside a list —
      // and a struct whose child has an empty or null name (a column without a name).
      const nested: Record<string, readonly unknown[] | Int32Array>[] = [
        { id: Int32Array.from([1, 2]), tags: [[1, 2], [3]] },
        { id: Int32Array.from([1, 2]), grid: [[[1], [2, 3]], [[4]]] },
        { id: Int32Array.from([1, 2]), s: [{ tags: [1, 2] }, { tags: [3] }] },
        { id: Int32Array.from([1, 2]), points: [[{ x: 1 }, { x: 2 }], [{ x: 3 }]] },
      ];
      if (this.chance(0.6)) return Buffer.from(tableToIPC(tableFromArrays(this.pick(nested)), 'stream'));
      const child = new Field(this.chance(0.5) ? '' : (null as unknown as string), new Utf8(), true);
      return Buffer.from(tableToIPC(new Table(new Schema([new Field('s', new Struct([child]), true)])), 'stream'));
    }
    if (r < 0.9) return Buffer.from('not arrow at all');
    return Buffer.alloc(0);
  }

  /** A value valid against `schema`; `name` is the property it is for (it picks the pool). */
  private value(schema: SchemaNode, name: string, depth: number): unknown {
    if (schema.nullable && this.chance(0.05)) return null;
    if (schema.enum) return this.pick(schema.enum);
    const alternatives = schema.oneOf ?? schema.anyOf;
    if (alternatives) return this.value(resolve(this.pick(alternatives)), name, depth + 1);
    if (schema.allOf) {
      return Object.assign({}, ...schema.allOf.map((s: SchemaNode) => this.value(resolve(s), name, depth + 1) ?? {}));
    }
    const type = schema.type ?? (schema.properties ? 'object' : schema.items ? 'array' : schema.additionalProperties ? 'object' : undefined);
    switch (type) {
      case 'object':
        return this.object(schema, depth);
      case 'array': {
        if (depth > 6) return [];
        const min = schema.minItems ?? 0;
        const n = min + Math.floor(this.rand() * 3);
        if ((name === 'single_vector' || name === 'multi_vector') && this.chance(0.5)) {
          const v = () => Array.from({ length: 8 }, () => this.rand());
          return name === 'single_vector' ? v() : Array.from({ length: 1 + Math.floor(this.rand() * 3) }, v);
        }
        if (name === 'updates' && resolve(schema.items).type === 'array') {
          return Array.from({ length: Math.max(1, n) }, () => [this.pick(COLUMNS), this.pick(SQL)]);
        }
        return Array.from({ length: n }, () => this.value(resolve(schema.items), singular(name), depth + 1));
      }
      case 'string':
        return this.string(name, schema);
      case 'integer':
        return this.integer(name, schema);
      case 'number':
        return this.pick([0, 1.5, -2.25, 1e30, 0.001, 3]);
      case 'boolean':
        return this.chance(0.5);
      default:
        return this.chance(0.5) ? this.string(name, {}) : this.integer(name, {});
    }
  }

  private object(schema: SchemaNode, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (depth > 6) return out;
    const required = new Set<string>(schema.required ?? []);
    for (const [key, prop] of Object.entries((schema.properties ?? {}) as Record<string, SchemaNode>)) {
      if (key === 'id' || key === 'identity' || key === 'context') continue;
      if (!required.has(key) && !this.chance(0.3)) continue;
      const v = this.value(resolve(prop), key, depth + 1);
      if (v !== undefined) out[key] = v;
    }
    if (schema.additionalProperties && !schema.properties) {
      const valueSchema = schema.additionalProperties === true ? { type: 'string' } : resolve(schema.additionalProperties);
      const n = Math.floor(this.rand() * 3);
      for (let i = 0; i < n; i++) {
        const key = this.chance(0.7) ? `k${Math.floor(this.rand() * 5)}` : this.pick(AWKWARD) || 'k';
        out[key] = this.value(valueSchema, 'value', depth + 1);
      }
    }
    return out;
  }

  private string(name: string, schema: SchemaNode): string {
    const awkward = this.chance(0.15);
    let s: string;
    if (['filter', 'predicate', 'where', 'expression', 'computed', 'when_matched_update_all_filt', 'when_not_matched_by_source_delete_filt'].includes(name)) {
      s = this.pick(SQL);
    } else if (awkward) s = this.pick(AWKWARD);
    else if (name === 'tag' || name === 'tags') s = this.pick(TAGS);
    else if (['branch', 'from_branch', 'name', 'new_branch'].includes(name)) s = this.pick(BRANCHES);
    else if (['column', 'path', 'vector_column', 'rename', 'columns', 'column_names', 'on'].includes(name)) s = this.pick(COLUMNS);
    else if (name === 'index_name') s = this.pick(INDEXES);
    else if (name === 'mode') s = this.pick(['create', 'exist_ok', 'overwrite', 'append', 'Create', 'Overwrite', 'sideways']);
    else if (name === 'behavior') s = this.pick(['Restrict', 'Cascade', 'restrict', 'cascade', 'other']);
    else if (name === 'index_type') s = this.pick(['BTREE', 'BITMAP', 'LABEL_LIST', 'IVF_PQ', 'IVF_FLAT', 'IVF_HNSW_SQ', 'FTS', 'bogus']);
    else if (name === 'distance_type' || name === 'metric_type') s = this.pick(['l2', 'cosine', 'dot', 'hamming', 'bogus']);
    else if (name === 'timeout') s = this.pick(['1ms', '30s', '5m', 'x']);
    else if (name === 'location') {
      s = this.pick(['tables/x/y.lance', 'file://evilhost/etc', 'file:///a%2Fb/x.lance', '/etc', 's3://b/k', '../../x', 'tables']);
    } else if (name === 'manifest_path') s = this.pick(['a/_versions/1.manifest', '../../etc/passwd', 'x']);
    else if (name === 'page_token') s = this.pick(['', 'a', 'zzz', '5']);
    else if (name === 'data_type' || name === 'type') s = this.pick(['int64', 'utf8', 'float32', 'bogus', 'struct']);
    else s = this.pick(['a', 'k', 'value', 'x1', ...AWKWARD]);
    if (schema.minLength && s.length < schema.minLength) s = s.padEnd(schema.minLength, 'a');
    if (schema.maxLength && s.length > schema.maxLength) s = s.slice(0, schema.maxLength);
    return s;
  }

  private integer(name: string, schema: SchemaNode): number {
    const min: number = schema.minimum ?? -5;
    const max: number = schema.maximum ?? Number.MAX_SAFE_INTEGER;
    const pool =
      name === 'version' || name === 'from_version' || name === 'start_version' || name === 'end_version'
        ? [0, 1, 2, 3, 99, 2 ** 40]
        : name === 'k' || name === 'limit'
          ? [0, 1, 3, 10, 1000, 2 ** 31, Number.MAX_SAFE_INTEGER]
          : [0, 1, 2, 7, 64, 1000, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER, -1];
    return Math.min(max, Math.max(min, this.pick(pool)));
  }
}

function singular(name: string): string {
  return name.endsWith('s') ? name.slice(0, -1) : name;
}
