import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setSignalRecorder, type SignalName } from '../../lib/signals.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ADMIN = 'audit-admin-key-0123456789abcdef';

/**
 * Audit events are for refusals in projects that exist (docs/events.md): a refused request for a
 * project that does not exist emits none — anyone can send those, and each would be a write to
 * the event store — and is counted as the `DeniedUnknownProject` signal instead.
 */
describe('no audit event for projects that do not exist', () => {
  let s: TestServer;
  let outsider: string;
  const counted: SignalName[] = [];

  beforeAll(async () => {
    s = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN });
    const admin = { 'x-api-key': ADMIN };
    await s.request('POST', '/v1/projects', JSON.stringify({ name: 'real' }), admin);
    await s.request('POST', '/v1/principals', JSON.stringify({ name: 'outsider' }), admin);
    outsider = (await s.request('POST', '/v1/principals/outsider/keys', '{}', admin)).json().api_key;
    setSignalRecorder((name) => counted.push(name));
  });
  afterEach(() => {
    counted.length = 0;
  });
  afterAll(async () => {
    setSignalRecorder(undefined);
    await s.stop();
  });

  const deniedEvents = async (): Promise<{ data: { project: string } }[]> => {
    const dir = path.join(s.dataDir, 'events');
    const files = await readdir(dir).catch(() => [] as string[]);
    const lines = (await Promise.all(files.map((f) => readFile(path.join(dir, f), 'utf8')))).join('').split('\n').filter(Boolean);
    return lines.map((l) => JSON.parse(l)).filter((e) => e.type === 'dev.rask.access.denied');
  };

  it('emits none for a missing project and counts it; a refusal in a real project is still audited', async () => {
    const before = (await deniedEvents()).length;
    const ghost = await s.request('POST', '/projects/ghost/v1/namespace/x/describe', '{}', { 'x-api-key': outsider });
    expect(ghost.status).toBeGreaterThanOrEqual(403);
    expect(ghost.json().code).toBeTypeOf('number');
    expect((await deniedEvents()).length).toBe(before);
    expect(counted).toContain('DeniedUnknownProject');

    counted.length = 0;
    const real = await s.request('POST', '/projects/real/v1/namespace/x/describe', '{}', { 'x-api-key': outsider });
    expect(real.status).toBe(403);
    const after = await deniedEvents();
    expect(after.length).toBe(before + 1);
    expect(after[after.length - 1].data.project).toBe('real');
    expect(counted).not.toContain('DeniedUnknownProject');
  });
});
