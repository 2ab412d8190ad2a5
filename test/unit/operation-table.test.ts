import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../lib/contract/operations.js';
import { RouteMatcher } from '../../lib/http/match.js';
import { operationsOf, specVersions } from '../support/spec.js';

describe.each(specVersions)('operation table against spec $name', ({ spec }) => {
  const specOperations = operationsOf(spec);

  it('has exactly the spec operations (a spec with more or fewer fails here)', () => {
    expect(specOperations.length).toBe(54);
    expect(OPERATIONS.map((o) => o.operationId).sort()).toEqual(specOperations.map((o) => o.operationId).sort());
  });

  it('routes every operation at the spec path, accepting the spec method', () => {
    for (const s of specOperations) {
      const mine = OPERATIONS.find((o) => o.operationId === s.operationId)!;
      expect(mine.path, s.operationId).toBe(s.path);
      expect(mine.methods, s.operationId).toContain(s.method);
    }
  });
});

describe('operation table', () => {
  it('has unique operation ids and unique method + path pairs', () => {
    expect(new Set(OPERATIONS.map((o) => o.operationId)).size).toBe(OPERATIONS.length);
    expect(() => new RouteMatcher(OPERATIONS)).not.toThrow();
    const dup = [...OPERATIONS, OPERATIONS[0]];
    expect(() => new RouteMatcher(dup)).toThrow(/duplicate route/);
  });

  it('accepts both verbs where the official client and the spec disagree', () => {
    const both = OPERATIONS.filter((o) => o.methods.length === 2).map((o) => o.operationId).sort();
    expect(both).toEqual(['CountTableRows', 'DescribeTableIndexStats', 'GetTableStats', 'ListTableTags']);
  });
});

describe('route matching', () => {
  const m = new RouteMatcher(OPERATIONS);
  const idOf = (method: string, path: string) => {
    const r = m.match(method, path);
    return r.kind === 'found' ? r.match.operation.operationId : r.kind;
  };

  it('tolerates trailing slashes, duplicate slashes and a base-path prefix', () => {
    expect(idOf('GET', '/v1/table')).toBe('ListAllTables');
    expect(idOf('GET', '/v1/table/')).toBe('ListAllTables');
    expect(idOf('POST', '//v1/namespace/a/describe')).toBe('DescribeNamespace');
    expect(idOf('POST', '/lance/prod/v1/namespace/a/describe')).toBe('DescribeNamespace');
  });

  it('prefers literal segments over parameters', () => {
    expect(idOf('POST', '/v1/table/version/batch-create')).toBe('BatchCreateTableVersions');
    expect(idOf('POST', '/v1/table/batch-commit')).toBe('BatchCommitTables');
    expect(idOf('POST', '/v1/table/t%24x/version/create')).toBe('CreateTableVersion');
  });

  it('distinguishes unknown routes from wrong methods', () => {
    expect(idOf('POST', '/v1/nope')).toBe('not-found');
    expect(idOf('DELETE', '/v1/namespace/a/describe')).toBe('method-not-allowed');
    expect(idOf('GET', '/v1/table/t/count_rows')).toBe('CountTableRows');
    expect(idOf('GET', '/v1/table/t/tags/list')).toBe('ListTableTags');
  });

  it('captures the raw index name', () => {
    const r = m.match('POST', '/v1/table/t/index/my+idx/stats');
    expect(r.kind === 'found' && r.match.params).toEqual({ id: 't', index_name: 'my+idx' });
  });
});
