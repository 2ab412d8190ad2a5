import { describe, expect, it } from 'vitest';
import { CatalogError, ErrorCode, STATUS_BY_CODE, TableNotFoundError } from '../../lib/errors.js';
import { errorResponse } from '../../lib/http/respond.js';
import { specErrorCodes } from '../support/spec.js';

describe('error codes', () => {
  it('match all 24 codes of the vendored spec, name for name', () => {
    expect(specErrorCodes.map((c) => c.code)).toEqual([...Array(24).keys()]);
    for (const { code, name } of specErrorCodes) {
      expect(ErrorCode[name as keyof typeof ErrorCode], name).toBe(code);
    }
  });

  it('map every code to the reference server status', () => {
    for (const { code } of specErrorCodes) expect(STATUS_BY_CODE[code as 0]).toBeGreaterThanOrEqual(400);
    expect(STATUS_BY_CODE[ErrorCode.TableNotFound]).toBe(404);
    expect(STATUS_BY_CODE[ErrorCode.NamespaceNotEmpty]).toBe(409);
    expect(STATUS_BY_CODE[ErrorCode.Unsupported]).toBe(406);
    expect(STATUS_BY_CODE[ErrorCode.Throttling]).toBe(429);
    expect(STATUS_BY_CODE[ErrorCode.Unauthenticated]).toBe(401);
  });

  it('render as the spec ErrorResponse with instance and detail', () => {
    const res = errorResponse(new TableNotFoundError('table ["a"] does not exist', { detail: 'dropped' }), 'req-1');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body.toString())).toEqual({
      code: 4,
      error: 'table ["a"] does not exist',
      detail: 'dropped',
      instance: 'req-1',
    });
  });

  it('hide the message of unexpected errors but log it', () => {
    const logged: unknown[] = [];
    const res = errorResponse(new Error('secret path /x'), 'req-2', { error: (_m, f) => logged.push(f) });
    expect(res.status).toBe(500);
    const body = JSON.parse(res.body.toString());
    expect(body.code).toBe(18);
    expect(JSON.stringify(body)).not.toContain('secret');
    expect(JSON.stringify(logged)).toContain('secret path');
  });

  it('keep subclasses in the CatalogError family', () => {
    const e = new TableNotFoundError('x');
    expect(e).toBeInstanceOf(CatalogError);
    expect(e.name).toBe('TableNotFoundError');
    expect(e.code).toBe(4);
  });
});
