/**
 * The job state machine as pure functions (lib/queue/transitions.ts, alter.ts, view.ts): every
 * WHERE clause of a claim, every way out of Running, and AlterTransaction's all-or-nothing rule.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_JOBS_INTERVAL_MS, loadLocalConfig } from '../../lib/config.js';
import { applyActions, parseActions, parseStatus } from '../../lib/queue/alter.js';
import { isJobId, jobIdTime, newJobId } from '../../lib/queue/ids.js';
import { DEFAULT_JOB_POLICY, type JobPolicy, type JobRecord } from '../../lib/ports/job-record.js';
import { backoffMs, claim, claimable, fail, LeaseLostError, release, renew, setStatusByRequest, succeed } from '../../lib/queue/transitions.js';
import { toTransaction } from '../../lib/queue/view.js';

const T0 = new Date('2030-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const policy: JobPolicy = { ...DEFAULT_JOB_POLICY, leaseMs: 1000, backoffBaseMs: 100, backoffMaxMs: 1000, maxAttempts: 3 };

function queued(over: Partial<JobRecord> = {}): JobRecord {
  return {
    kind: 'job',
    id: newJobId(T0),
    type: 'create_index',
    table: { id: ['ns', 't'], uid: 'u1' },
    params: { column: 'vec' },
    summary: { index_name: 'vec_idx' },
    status: 'Queued',
    properties: {},
    output: {},
    attempts: 0,
    maxAttempts: 3,
    notBefore: T0.toISOString(),
    createdAt: T0.toISOString(),
    updatedAt: T0.toISOString(),
    ...over,
  };
}

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { code?: number }).code;
  }
  return 'ok';
};

describe('job ids', () => {
  it('are 32 hex digits whose byte order is creation order', () => {
    const a = newJobId(at(0));
    const b = newJobId(at(1));
    expect(isJobId(a)).toBe(true);
    expect(a < b).toBe(true);
    expect(jobIdTime(a)).toEqual(at(0));
    for (const bad of ['', 'x'.repeat(32), a.toUpperCase(), `${a}0`, '../etc', 'ns$t']) expect(isJobId(bad)).toBe(false);
  });
});

describe('claim: the WHERE clause', () => {
  it('takes a queued job only once its not-before time has come', () => {
    const job = queued({ notBefore: at(500).toISOString() });
    expect(claimable(job, at(499))).toBeUndefined();
    expect(claimable(job, at(500))).toBe('due');
    const running = claim(job, 'w1', 'tok1', at(500), policy);
    expect(running).toMatchObject({ status: 'Running', attempts: 1, lease: { owner: 'w1', token: 'tok1', until: at(1500).toISOString() } });
  });

  it('takes a running job only once its lease has run out, as a new attempt that says why', () => {
    const running = claim(queued(), 'w1', 'tok1', at(0), policy);
    expect(claimable(running, at(1000))).toBeUndefined();
    expect(claimable(running, at(1001))).toBe('abandoned');
    const again = claim(running, 'w2', 'tok2', at(1001), policy);
    expect(again).toMatchObject({ status: 'Running', attempts: 2, lease: { owner: 'w2', token: 'tok2' } });
    expect(again.error?.message).toMatch(/worker w1 stopped renewing its lease/);
  });

  it('fails an abandoned job that has used all its attempts instead of running it again', () => {
    let job = queued();
    for (let n = 1; n <= 3; n++) job = claim(job, `w${n}`, `t${n}`, at(n * 2000), policy);
    expect(job.attempts).toBe(3);
    const out = claim(job, 'w4', 't4', at(10_000), policy);
    expect(out).toMatchObject({ status: 'Failed', attempts: 3, finishedAt: at(10_000).toISOString() });
    expect(out.lease).toBeUndefined();
    expect(out.error?.message).toMatch(/all 3 attempts are used/);
  });

  it('never takes finished jobs', () => {
    for (const status of ['Succeeded', 'Failed', 'Canceled'] as const) {
      expect(claimable(queued({ status }), at(1e9))).toBeUndefined();
    }
  });
});

describe('a running job ends in one of four ways, only for the lease holder', () => {
  const running = () => claim(queued(), 'w1', 'tok', at(0), policy);

  it('heartbeat extends the lease and records progress', () => {
    const r = renew(running(), 'tok', at(600), policy, { progress: 'half' });
    expect(r.lease?.until).toBe(at(1600).toISOString());
    expect(r.heartbeatAt).toBe(at(600).toISOString());
    expect(r.output).toEqual({ progress: 'half' });
  });

  it('success', () => {
    const done = succeed(running(), 'tok', at(10), { index_name: 'vec_idx' });
    expect(done).toMatchObject({ status: 'Succeeded', output: { index_name: 'vec_idx' }, finishedAt: at(10).toISOString() });
    expect(done.lease).toBeUndefined();
  });

  it('a failure with attempts left goes back to the queue after a backoff', () => {
    const back = fail(running(), 'tok', at(10), policy, { message: 'boom', code: 18, permanent: false }, () => 0.5);
    expect(back).toMatchObject({ status: 'Queued', attempts: 1, error: { message: 'boom', code: 18 } });
    expect(back.notBefore).toBe(at(110).toISOString());
    expect(back.lease).toBeUndefined();
    expect(claimable(back, at(109))).toBeUndefined();
  });

  it('a permanent failure, or the last attempt, is Failed', () => {
    expect(fail(running(), 'tok', at(10), policy, { message: 'bad', code: 13, permanent: true }).status).toBe('Failed');
    let job = queued({ attempts: 2 });
    job = claim(job, 'w', 't', at(0), policy);
    expect(fail(job, 't', at(1), policy, { message: 'x', permanent: false })).toMatchObject({ status: 'Failed', attempts: 3 });
  });

  it('release gives the job back without spending an attempt', () => {
    expect(release(running(), 'tok', at(5))).toMatchObject({ status: 'Queued', attempts: 0, notBefore: at(5).toISOString() });
  });

  it('a worker whose lease is gone (reclaimed, canceled) is told so and may write nothing', () => {
    const reclaimed = claim(running(), 'w2', 'other', at(5000), policy);
    const canceled = setStatusByRequest(running(), 'Canceled', at(5));
    for (const job of [reclaimed, canceled]) {
      expect(() => renew(job, 'tok', at(6000), policy)).toThrow(LeaseLostError);
      expect(() => succeed(job, 'tok', at(6000), {})).toThrow(LeaseLostError);
      expect(() => fail(job, 'tok', at(6000), policy, { message: 'x', permanent: false })).toThrow(LeaseLostError);
      expect(() => release(job, 'tok', at(6000))).toThrow(LeaseLostError);
    }
  });

  it('backs off exponentially, capped, with ±20 % jitter', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, policy, () => 0.5))).toEqual([100, 200, 400, 800, 1000]);
    expect(backoffMs(1, policy, () => 0)).toBe(80);
    expect(backoffMs(1, policy, () => 1)).toBe(120);
  });
});

describe('AlterTransaction actions', () => {
  const apply = (job: JobRecord, actions: unknown) => applyActions(job, parseActions(actions), at(1));

  it('parses statuses case-insensitively, PascalCase or snake_case', () => {
    for (const s of ['Canceled', 'canceled', 'CANCELED']) expect(parseStatus(s, 'status')).toBe('Canceled');
    expect(parseStatus('succeeded', 'status')).toBe('Succeeded');
    expect(code(() => parseStatus('cancelled', 'status'))).toBe(13);
  });

  it('cancels or fails a queued or running job; any other transition is 13', () => {
    const running = claim(queued(), 'w', 't', at(0), policy);
    expect(setStatusByRequest(queued(), 'Canceled', at(1))).toMatchObject({ status: 'Canceled', finishedAt: at(1).toISOString() });
    expect(setStatusByRequest(running, 'Canceled', at(1)).lease).toBeUndefined();
    expect(setStatusByRequest(running, 'Failed', at(1)).error?.message).toMatch(/failed by request/);
    const done = succeed(running, 't', at(2), {});
    expect(code(() => setStatusByRequest(done, 'Canceled', at(3)))).toBe(13);
    expect(code(() => setStatusByRequest(queued(), 'Running', at(3)))).toBe(13);
    expect(code(() => setStatusByRequest(queued(), 'Succeeded', at(3)))).toBe(13);
    expect(code(() => setStatusByRequest(queued(), 'Queued', at(3)))).toBe(13);
    // Repeating the status a finished job has is harmless.
    const canceled = setStatusByRequest(queued(), 'Canceled', at(1));
    expect(setStatusByRequest(canceled, 'Canceled', at(5))).toBe(canceled);
  });

  it('sets and unsets properties with the spec modes', () => {
    const job = queued({ properties: { a: '1' } });
    expect(apply(job, [{ setPropertyAction: { key: 'a', value: '2' } }]).properties).toEqual({ a: '2' });
    expect(apply(job, [{ setPropertyAction: { key: 'a', value: '2', mode: 'skip' } }]).properties).toEqual({ a: '1' });
    expect(apply(job, [{ setPropertyAction: { key: 'b', value: '2', mode: 'Fail' } }]).properties).toEqual({ a: '1', b: '2' });
    expect(code(() => apply(job, [{ setPropertyAction: { key: 'a', value: '2', mode: 'fail' } }]))).toBe(13);
    expect(apply(job, [{ unsetPropertyAction: { key: 'zz' } }]).properties).toEqual({ a: '1' });
    expect(apply(job, [{ unsetPropertyAction: { key: 'a', mode: 'FAIL' } }]).properties).toEqual({});
    expect(code(() => apply(job, [{ unsetPropertyAction: { key: 'zz', mode: 'fail' } }]))).toBe(13);
  });

  it('applies all actions or none', () => {
    const job = queued();
    const actions = [
      { setPropertyAction: { key: 'x', value: '1' } },
      { setStatusAction: { status: 'Canceled' } },
      { unsetPropertyAction: { key: 'missing', mode: 'fail' } },
    ];
    expect(code(() => apply(job, actions))).toBe(13);
    expect(job).toMatchObject({ status: 'Queued', properties: {} });
  });

  it("refuses the server's keys, malformed actions and oversized property maps", () => {
    const job = queued();
    expect(code(() => apply(job, [{ setPropertyAction: { key: 'rask.error', value: 'x' } }]))).toBe(13);
    expect(code(() => apply(job, [{ unsetPropertyAction: { key: 'rask.kind' } }]))).toBe(13);
    for (const bad of [[], {}, null, [{}], [{ setStatusAction: { status: 'Canceled' }, setPropertyAction: { key: 'a', value: 'b' } }],
      [{ setPropertyAction: { key: 'a' } }], [{ setPropertyAction: { key: '', value: 'b' } }], [{ setPropertyAction: { key: 'a', value: 'b', mode: 'maybe' } }]]) {
      expect(code(() => apply(job, bad)), JSON.stringify(bad)).toBe(13);
    }
    const many = Array.from({ length: 65 }, (_, i) => ({ setPropertyAction: { key: `k${i}`, value: 'v' } }));
    expect(code(() => apply(job, many))).toBe(13);
  });
});

describe('the transaction view', () => {
  it("shows caller properties and the server's view under rask.*, server keys winning", () => {
    const token = 'lease-token-xyz';
    const running = renew(claim(queued({ properties: { team: 'ml' } }), 'w1', token, at(0), policy), token, at(10), policy, {
      progress: '50%',
      kind: 'not the kind',
    });
    const view = toTransaction(running);
    expect(view.status).toBe('Running');
    expect(view.properties).toMatchObject({
      team: 'ml',
      'rask.kind': 'create_index',
      'rask.index_name': 'vec_idx',
      'rask.table': '["ns","t"]',
      'rask.attempts': '1',
      'rask.max_attempts': '3',
      'rask.worker': 'w1',
      'rask.progress': '50%',
      'rask.heartbeat_at': at(10).toISOString(),
    });
    expect(view.properties['rask.not_before']).toBeUndefined();
    expect(JSON.stringify(view)).not.toContain(token); // the lease token is never shown
  });
});

describe('RASK_JOBS_INTERVAL_MS', () => {
  it('defaults to a pass every 2 s, accepts 0 (no timer), refuses anything else', () => {
    expect(loadLocalConfig({}).RASK_JOBS_INTERVAL_MS).toBe(DEFAULT_JOBS_INTERVAL_MS);
    expect(DEFAULT_JOBS_INTERVAL_MS).toBe(2000);
    expect(loadLocalConfig({ RASK_JOBS_INTERVAL_MS: '0' }).RASK_JOBS_INTERVAL_MS).toBe(0);
    for (const bad of ['-1', '1.5', 'soon']) {
      expect(() => loadLocalConfig({ RASK_JOBS_INTERVAL_MS: bad })).toThrow(ConfigError);
    }
  });
});
