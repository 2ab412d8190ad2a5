import { describe, expect, it } from 'vitest';
import { InternalError, InvalidInputError, ServiceUnavailableError, ThrottlingError } from '../../lib/errors.js';
import { redactText } from '../../lib/http/redact.js';
import { errorResponse } from '../../lib/http/respond.js';

describe('error bodies without storage paths (issue #8, defect 11)', () => {
  it('removes Rust source locations, storage URIs and the data directory (with or without its leading slash)', () => {
    const raw =
      'Not found: tmp/rask-x/warehouses/default/tables/ab/t.lance/_versions, /usr/local/cargo/registry/src/lance-8.0.0/src/io.rs:123:45';
    expect(redactText(raw, ['/tmp/rask-x'])).toBe('Not found: <storage>/warehouses/default/tables/ab/t.lance/_versions');
    expect(redactText('open /tmp/rask-x/registry/p failed', ['/tmp/rask-x'])).toBe('open <storage>/registry/p failed');
    expect(redactText('at s3://bucket/warehouse/t.lance and file:///srv/data/x', [])).toBe('at <storage> and <storage>');
    // Ids and field names are left alone.
    expect(redactText('table ["a/b","c"] already exists; "updates[0][1]"', ['/tmp/rask-x'])).toBe(
      'table ["a/b","c"] already exists; "updates[0][1]"',
    );
  });

  it('answers the redacted text and logs the full one with the request id', () => {
    const logged: Record<string, unknown>[] = [];
    const levels: string[] = [];
    const logger = {
      error: (_m: string, fields: Record<string, unknown>) => void (levels.push('error'), logged.push(fields)),
      warn: (_m: string, fields: Record<string, unknown>) => void (levels.push('warn'), logged.push(fields)),
    };
    const res = errorResponse(new InvalidInputError('bad file /data/dir/x.lance'), 'req-1', logger, { redact: ['/data/dir'] });
    expect(JSON.parse(res.body.toString())).toEqual({ code: 13, error: 'bad file <storage>/x.lance', instance: 'req-1' });
    expect(logged).toHaveLength(1);
    expect(logged[0].requestId).toBe('req-1');
    expect(String(logged[0].err)).toContain('/data/dir/x.lance');

    const internal = errorResponse(new InternalError('LanceDB error: x', { cause: new Error('raw /data/dir/y.rs:1:2') }), 'req-2', logger, {
      redact: ['/data/dir'],
    });
    expect(JSON.parse(internal.body.toString())).toEqual({
      code: 18,
      error: 'LanceDB error: x',
      detail: 'see server logs for request req-2',
      instance: 'req-2',
    });
    expect(String(logged[1].err)).toContain('caused by: Error: raw /data/dir/y.rs:1:2');
    // A client's mistake is kept at warn; only the internal error reaches error level (alarms).
    expect(levels).toEqual(['warn', 'error']);
  });

  it('a 503 or 429 carries Retry-After', () => {
    expect(errorResponse(new ServiceUnavailableError('merge insert timed out'), 'r').headers['retry-after']).toBe('1');
    expect(errorResponse(new ThrottlingError('slow down'), 'r').headers['retry-after']).toBe('1');
    expect(errorResponse(new InvalidInputError('no'), 'r').headers['retry-after']).toBeUndefined();
  });
});
