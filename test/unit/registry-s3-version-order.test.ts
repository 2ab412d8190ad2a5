/**
 * Issue #30: on S3 a delete and a re-create of one key in the same second cannot be ordered by
 * LastModified (the listing has whole seconds, and the SDK hands versions and delete markers over
 * as two lists). The S3 history must still give S3's own order (lib/adapters/aws/s3-registry-history.ts,
 * inPageOrder), so the state at T (lib/maintenance/registry/state-at.ts) is the one S3 had.
 * The fake keeps each key's versions and delete markers in one list, newest first, and lists
 * LastModified to the second, as S3 does (test/support/s3-fake.ts).
 * Seen to fail before the fix: "put, delete, put in one second" read as deleted at T.
 */
import { describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { s3RegistryHistory } from '../../lib/adapters/aws/s3-registry-history.js';
import { keysAt } from '../../lib/maintenance/registry/state-at.js';
import { createS3Fake } from '../support/s3-fake.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits until the clock has just entered a new second, so that the next writes share one. */
const nextSecond = async () => {
  await sleep(1000 - (Date.now() % 1000) + 20);
};

function fixture() {
  const fake = createS3Fake();
  const store = new S3ObjectStore({ client: fake.client, bucket: 'reg', prefix: 'registry/' });
  const history = s3RegistryHistory({ client: fake.client, bucket: 'reg', prefix: 'registry/', retainedDays: 30 });
  return { fake, store, history };
}

async function stateAt(history: ReturnType<typeof s3RegistryHistory>, at: Date) {
  const out = new Map<string, string | undefined>();
  for await (const k of keysAt(history, { all: true }, at)) out.set(k.key, k.at ? (await history.body(k.at)).toString() : undefined);
  return out;
}

describe('S3 history: one key written and deleted within one second is ordered as S3 lists it', () => {
  it('put A, delete, put B in one second, then put C later: the state between is B; put, put, delete: deleted', { timeout: 20_000 }, async () => {
    const { fake, store, history } = fixture();
    await nextSecond();
    await store.put('t/recreated', 'A');
    await store.delete('t/recreated');
    await store.put('t/recreated', 'B');
    await store.put('t/deleted', 'A');
    await store.put('t/deleted', 'B');
    await store.delete('t/deleted');
    await store.put('t/deleted', 'X');
    await store.delete('t/deleted');
    await nextSecond();
    const at = new Date();
    await nextSecond();
    await store.put('t/recreated', 'C');
    await store.put('t/deleted', 'C');
    const versions: string[][] = [];
    for await (const vs of history.versions('t/')) versions.push(vs.map((v) => (v.deleted ? 'deleted' : v.ref)));
    const state = await stateAt(history, at);
    expect(state.get('t/recreated')).toBe('B');
    expect(state.has('t/deleted')).toBe(true); // it exists now
    expect(state.get('t/deleted')).toBeUndefined(); // but not at T
    // Newest first, as S3 lists them: C, then the second's writes in reverse order.
    const recreated = versions[1]!;
    expect(recreated).toHaveLength(4);
    expect(recreated[2]).toBe('deleted');
    const deleted = versions[0]!;
    expect(deleted.map((v) => v === 'deleted')).toEqual([false, true, false, true, false, false]);
    // The latest resolves a tie without asking: a key put then deleted in one second costs one LIST.
    fake.clearRequests();
    await nextSecond();
    await store.put('u/once', 'A');
    await store.delete('u/once');
    for await (const _ of history.versions('u/')) void _;
    expect(fake.requests().filter((r) => r.op === 'LIST')).toHaveLength(1);
  });
});
