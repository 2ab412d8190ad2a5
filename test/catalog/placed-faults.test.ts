// @covers RenameTable, DeclareTable, RegisterTable, CreateNamespace, DropTable, UndropTable, ListTableTasks, SetTableProtection
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PERSIST_ATTEMPTS } from '../../lib/catalog/outcome.js';
import { manifestName } from '../../lib/catalog/dataset/manifests.js';
import { reconcileWith } from '../../lib/maintenance/reconcile.js';
import { keys } from '../../lib/registry/keys.js';
import { faultedMetaApp, keyOf, type Answer, type FaultedApp } from '../support/placed-faults.js';
import { assertTableInvariants } from '../support/table-invariants.js';

/**
 * One placed fault per finding of issue #35, each through the metadata Lambda's composition over
 * the S3 fake (test/support/placed-faults.ts). After the door answers, faults off: the answer is
 * honest (never "already exists" / "not found" for the door's own change, never 500), and after
 * one read the registry holds what the crash tests' invariants demand.
 */

let app: FaultedApp;
const describeTable = (ns: string, name: string) => app.call('POST', `/v1/table/${ns}%24${name}/describe`, { id: [ns, name] });

/** A failed door answers 503 / 17 with Retry-After, or succeeds. */
function honest(res: Answer): void {
  if (res.status === 200) return;
  expect(res.status, JSON.stringify(res.body)).toBe(503);
  expect(res.body.code).toBe(17);
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
}

describe('placed faults, one per finding (issue #35)', () => {
  beforeEach(async () => {
    app = await faultedMetaApp({ RASK_TRASH_GRACE_DAYS: '7' });
    await app.ok('POST', '/v1/namespace/ns/create', { id: ['ns'] });
  });
  afterEach(() => app.close());

  it('finding 2: an acknowledged rename survives a 409 on the destination If-Match PUT', async () => {
    await app.ok('POST', '/v1/table/ns%24a/declare', { id: ['ns', 'a'] });
    // The activation of the arrival (the only If-Match PUT at the destination) meets S3's 409.
    app.registryStore.place({ op: 'putIfMatch', key: keyOf.table(['ns', 'b']), kind: 'conflict' });
    const res = await app.call('POST', '/v1/table/ns%24a/rename', { id: ['ns', 'a'], new_table_name: 'b' });
    expect(app.registryStore.fired()).toHaveLength(1);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await describeTable('ns', 'b')).status).toBe(200);
    expect((await describeTable('ns', 'a')).status).toBe(404);
    await assertTableInvariants(app.services);
  });

  it("finding 3: DeclareTable whose record write landed but whose answer was lost recognises its own table", async () => {
    app.registryStore.place({ op: 'putIfAbsent', key: keyOf.table(['ns', 't']), kind: 'applied-then-lost' });
    const res = await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
    expect(app.registryStore.fired()).toHaveLength(1);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await describeTable('ns', 't')).body.location).toBe(res.body.location);
    await assertTableInvariants(app.services);
  });

  it('finding 3: DeclareTable whose claim write landed but whose answer was lost keeps its table', async () => {
    app.registryStore.place({ op: 'putIfAbsent', key: keyOf.claim(), kind: 'applied-then-lost' });
    const res = await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
    expect(app.registryStore.fired()).toHaveLength(1);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await assertTableInvariants(app.services);
    expect((await describeTable('ns', 't')).status).toBe(200);
  });

  it('finding 3: DeclareTable whose record write has an unknown outcome never releases the claim of a table it created', async () => {
    app.registryStore.place({ op: 'putIfAbsent', key: keyOf.table(['ns', 't']), kind: 'applied-unavailable' });
    honest(await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] }));
    expect((await describeTable('ns', 't')).status).toBe(200); // it landed
    await assertTableInvariants(app.services);
  });

  it('finding 3: RegisterTable whose record write landed but whose answer was lost recognises its own table', async () => {
    const body = Buffer.from('manifest');
    await app.fake.client.send(new PutObjectCommand({ Bucket: 'wh-bucket', Key: `warehouse/default/ext/d.lance/_versions/${manifestName(1, 'V2')}`, Body: body }));
    app.registryStore.place({ op: 'putIfAbsent', key: keyOf.table(['ns', 'r']), kind: 'applied-then-lost' });
    const res = await app.call('POST', '/v1/table/ns%24r/register', { id: ['ns', 'r'], location: 'ext/d.lance' });
    expect(app.registryStore.fired()).toHaveLength(1);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await describeTable('ns', 'r')).status).toBe(200);
    await assertTableInvariants(app.services);
  });

  it('finding 3: CreateNamespace whose write landed but whose answer was lost answers 200, not "already exists"', async () => {
    app.registryStore.place({ op: 'putIfAbsent', key: keyOf.namespace(['ns', 'child']), kind: 'applied-then-lost' });
    const res = await app.call('POST', '/v1/namespace/ns%24child/create', { id: ['ns', 'child'] });
    expect(app.registryStore.fired()).toHaveLength(1);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await app.call('POST', '/v1/namespace/ns%24child/describe', { id: ['ns', 'child'] })).status).toBe(200);
  });

  it('finding 3: DropTable purge=true whose DELETE landed but whose answer was lost answers 200 and releases the claim', async () => {
    await app.ok('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
    app.registryStore.place({ op: 'deleteIfMatch', key: keyOf.table(['ns', 't']), kind: 'applied-then-lost' });
    const res = await app.call('POST', '/v1/table/ns%24t/drop', { id: ['ns', 't'] }, '&purge=true');
    expect(app.registryStore.fired()).toHaveLength(1);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await describeTable('ns', 't')).status).toBe(404);
    await assertTableInvariants(app.services);
  });

  it("finding 4: DeclareTable's failed re-read of the parent leaves the table whole (record and claim) or not at all", async () => {
    // The declare reads the namespace twice: up front, and after its writes (the create-under-drop check).
    app.registryStore.place({ op: 'get', key: keyOf.namespace(['ns']), nth: 2, kind: 'unavailable' });
    honest(await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] }));
    expect(app.registryStore.fired()).toHaveLength(1);
    await describeTable('ns', 't');
    await assertTableInvariants(app.services);
  });

  it('finding 4: an interrupted UndropTable (under a new name) is settled by the next read of the trash: no duplicate, claim held, the retried undrop answers the table', async () => {
    await app.ok('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
    await app.ok('POST', '/v1/table/ns%24t/drop', { id: ['ns', 't'] });
    // The undrop re-registers the record, then its claim write (trashed → held) fails.
    app.registryStore.place({ op: 'putIfMatch', key: (k, body) => keyOf.claim()(k) && !!body?.includes('"state":"held"'), kind: 'unavailable', times: PERSIST_ATTEMPTS }); // through the door's own attempts (outcome.ts, persist)
    honest(await app.call('POST', '/v1/table/ns%24t/undrop', { id: ['ns', 't'], new_table_name: 'u' }));
    expect(app.registryStore.fired()).toHaveLength(PERSIST_ATTEMPTS);
    // The next read of the trash settles it: nothing left to undrop there.
    const tasks = await app.ok('GET', '/v1/table/ns%24t/tasks');
    expect(tasks.tasks).toEqual([]);
    await assertTableInvariants(app.services);
    // The retried undrop is answered as the success it was (the table is back as u), never with a second record of it.
    const again = await app.call('POST', '/v1/table/ns%24t/undrop', { id: ['ns', 't'], new_table_name: 'u' });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.id).toEqual(['ns', 'u']);
    expect((await app.call('POST', '/v1/table/ns%24t/undrop', { id: ['ns', 't'] })).status).toBe(404);
    expect((await describeTable('ns', 't')).status).toBe(404);
    expect((await describeTable('ns', 'u')).status).toBe(200);
    await assertTableInvariants(app.services);
  });

  it('finding 4: an interrupted UndropTable whose table is renamed and dropped again before any read of the trash leaves one trash entry, not two', async () => {
    await app.ok('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
    await app.ok('POST', '/v1/table/ns%24t/drop', { id: ['ns', 't'] });
    app.registryStore.place({ op: 'putIfMatch', key: (k, body) => keyOf.claim()(k) && !!body?.includes('"state":"held"'), kind: 'unavailable', times: PERSIST_ATTEMPTS });
    honest(await app.call('POST', '/v1/table/ns%24t/undrop', { id: ['ns', 't'] }));
    expect(app.registryStore.fired()).toHaveLength(PERSIST_ATTEMPTS);
    // Live under t (its claim still `trashed`, its trash entry still there); renamed, then dropped again.
    await app.ok('POST', '/v1/table/ns%24t/rename', { id: ['ns', 't'], new_table_name: 'u' });
    await app.ok('POST', '/v1/table/ns%24u/drop', { id: ['ns', 'u'] });
    expect((await app.ok('GET', '/v1/table/ns%24t/tasks')).tasks).toEqual([]);
    expect((await app.ok('GET', '/v1/table/ns%24u/tasks')).tasks).toHaveLength(1);
    await assertTableInvariants(app.services);
    expect((await app.call('POST', '/v1/table/ns%24t/undrop', { id: ['ns', 't'] })).status).toBe(404);
    expect((await app.call('POST', '/v1/table/ns%24u/undrop', { id: ['ns', 'u'] })).status).toBe(200);
    await assertTableInvariants(app.services);
  });

  it('finding 4: a forced rename of a protected table, interrupted after its decision and finished by a read, keeps the protection', async () => {
    await app.ok('POST', '/v1/table/ns%24p/declare', { id: ['ns', 'p'] });
    await app.ok('POST', '/v1/table/ns%24p/protection', { protected: true });
    // The activation of the destination fails: the move is committed, the request answers 503.
    app.registryStore.place({ op: 'putIfMatch', key: keyOf.table(['ns', 'q']), kind: 'unavailable' });
    honest(await app.call('POST', '/v1/table/ns%24p/rename', { id: ['ns', 'p'], new_table_name: 'q' }, '&force=true'));
    expect(app.registryStore.fired()).toHaveLength(1);
    expect((await describeTable('ns', 'q')).status).toBe(200); // the read finishes the move
    expect((await app.ok('GET', '/v1/table/ns%24q/protection')).protected).toBe(true);
    expect((await app.call('POST', '/v1/table/ns%24q/drop', { id: ['ns', 'q'] })).body.code).toBe(19);
    await assertTableInvariants(app.services);
  });

  it('finding 4: a recoverable drop that loses to a rename leaves neither a trash entry for the live table nor a trashed claim', async () => {
    await app.ok('POST', '/v1/table/ns%24a/declare', { id: ['ns', 'a'] });
    // Between the drop's trash bookkeeping and its record removal, a rename moves the table away.
    let renamed: Answer | undefined;
    app.registryStore.place({
      op: 'deleteIfMatch',
      key: keyOf.table(['ns', 'a']),
      kind: 'interleave',
      run: async () => {
        renamed = await app.call('POST', '/v1/table/ns%24a/rename', { id: ['ns', 'a'], new_table_name: 'b' });
      },
    });
    const dropped = await app.call('POST', '/v1/table/ns%24a/drop', { id: ['ns', 'a'] });
    expect(app.registryStore.fired()).toHaveLength(1);
    expect(renamed?.status, JSON.stringify(renamed?.body)).toBe(200);
    expect(dropped.status).toBe(404); // the table had left the name
    expect((await describeTable('ns', 'b')).status).toBe(200);
    expect((await app.ok('GET', '/v1/table/ns%24a/tasks')).tasks).toEqual([]);
    // Undropping `a` must not bring back a second record of the live table b.
    expect((await app.call('POST', '/v1/table/ns%24a/undrop', { id: ['ns', 'a'] })).status).toBe(404);
    await assertTableInvariants(app.services);
    // Dropping b for good leaves no trash record without a claim.
    await app.ok('POST', '/v1/table/ns%24b/drop', { id: ['ns', 'b'] }, '&purge=true');
    await assertTableInvariants(app.services);
  });

  describe('no claim left after one read without the SDK retries (a 503 whose look failed too)', () => {
    // A claim on a fresh random location that no record names is reached by no read of any
    // name: the door that wrote it must take it back itself (docs/protocols.md, "Faults at the doors").
    it('DeclareTable at a taken name takes its fresh claim back through a failed release', async () => {
      await app.ok('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
      app.registryStore.place({ op: 'deleteIfMatch', key: keyOf.claim(), kind: 'unavailable' });
      const res = await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
      expect(app.registryStore.fired()).toHaveLength(1);
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.code).toBe(5);
      await assertTableInvariants(app.services);
    });

    // When the door's own attempts all fail, the name is all that leads to the claim: a note in
    // the name's trash that its next read settles (trash.ts, fileWithdrawal / settleWithdrawal).
    it('DeclareTable at a taken name whose release fails every attempt: the next read of the trash takes the claim back', async () => {
      await app.ok('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
      app.registryStore.place({ op: 'deleteIfMatch', key: keyOf.claim(), kind: 'unavailable', times: PERSIST_ATTEMPTS });
      const res = await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
      expect(app.registryStore.fired()).toHaveLength(PERSIST_ATTEMPTS);
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.code).toBe(5);
      expect((await app.ok('GET', '/v1/table/ns%24t/tasks')).tasks).toEqual([]); // the note is never shown
      await assertTableInvariants(app.services);
      expect((await app.call('POST', '/v1/table/ns%24t/undrop', { id: ['ns', 't'] })).status).toBe(404);
    });

    for (const kind of ['unavailable', 'applied-unavailable'] as const) {
      it(`DeclareTable whose record write is unanswered (${kind}) and whose look fails every attempt: the next read of the trash decides it`, async () => {
        app.registryStore.place({ op: 'putIfAbsent', key: keyOf.table(['ns', 't']), kind });
        app.registryStore.place({ op: 'get', key: keyOf.table(['ns', 't']), kind: 'unavailable', times: PERSIST_ATTEMPTS });
        honest(await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] }));
        expect(app.registryStore.fired()).toHaveLength(1 + PERSIST_ATTEMPTS);
        expect((await app.ok('GET', '/v1/table/ns%24t/tasks')).tasks).toEqual([]);
        await assertTableInvariants(app.services); // the table whole (record and claim) or not at all
        expect((await describeTable('ns', 't')).status).toBe(kind === 'applied-unavailable' ? 200 : 404);
      });
    }

    it('DeclareTable whose claim write has an unknown outcome takes the claim back with its record', async () => {
      app.registryStore.place({ op: 'putIfAbsent', key: keyOf.claim(), kind: 'applied-unavailable' });
      honest(await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] }));
      expect(app.registryStore.fired()).toHaveLength(1);
      await describeTable('ns', 't');
      await assertTableInvariants(app.services);
    });

    it('DeclareTable whose record landed unanswered and whose claim write failed writes its claim again', async () => {
      app.registryStore.place({ op: 'putIfAbsent', key: keyOf.table(['ns', 't']), kind: 'applied-unavailable' });
      app.registryStore.place({ op: 'putIfAbsent', key: keyOf.claim(), kind: 'unavailable' });
      const res = await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
      expect(app.registryStore.fired()).toHaveLength(2);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect((await describeTable('ns', 't')).body.location).toBe(res.body.location);
      await assertTableInvariants(app.services);
    });

    it('DeclareTable withdrawn from a dropped namespace takes its claim back through a failed release', async () => {
      await app.ok('POST', '/v1/namespace/ns%24k/create', { id: ['ns', 'k'] });
      // The namespace goes while the declare runs (its parent re-read sees it gone), and the
      // release of the withdrawn table's claim meets a 503.
      app.registryStore.place({
        op: 'putIfAbsent',
        key: keyOf.table(['ns', 'k', 't']),
        kind: 'interleave',
        run: async () => void (await app.ok('POST', '/v1/namespace/ns%24k/drop', { id: ['ns', 'k'] })),
      });
      app.registryStore.place({ op: 'deleteIfMatch', key: keyOf.claim(), kind: 'unavailable' });
      const res = await app.call('POST', '/v1/table/ns%24k%24t/declare', { id: ['ns', 'k', 't'] });
      expect(app.registryStore.fired()).toHaveLength(2);
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      await assertTableInvariants(app.services);
    });

    it('RegisterTable confirms its claim through a 503 on the confirmation (no `pending` claim under a live table)', async () => {
      await app.fake.client.send(
        new PutObjectCommand({ Bucket: 'wh-bucket', Key: `warehouse/default/ext/p.lance/_versions/${manifestName(1, 'V2')}`, Body: Buffer.from('m') }),
      );
      app.registryStore.place({ op: 'putIfMatch', key: (k, body) => keyOf.claim()(k) && !!body?.includes('"state":"held"'), kind: 'unavailable' });
      const res = await app.call('POST', '/v1/table/ns%24p/register', { id: ['ns', 'p'], location: 'ext/p.lance' });
      expect(app.registryStore.fired()).toHaveLength(1);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await assertTableInvariants(app.services);
    });

    for (const kind of ['unavailable', 'applied-unavailable'] as const) {
      it(`RegisterTable whose record write is unanswered (${kind}) looks: no \`pending\` claim left either way`, async () => {
        await app.fake.client.send(
          new PutObjectCommand({ Bucket: 'wh-bucket', Key: `warehouse/default/ext/u.lance/_versions/${manifestName(1, 'V2')}`, Body: Buffer.from('m') }),
        );
        app.registryStore.place({ op: 'putIfAbsent', key: keyOf.table(['ns', 'u']), kind });
        const res = await app.call('POST', '/v1/table/ns%24u/register', { id: ['ns', 'u'], location: 'ext/u.lance' });
        expect(app.registryStore.fired()).toHaveLength(1);
        if (kind === 'applied-unavailable') expect(res.status, JSON.stringify(res.body)).toBe(200);
        else honest(res);
        await describeTable('ns', 'u');
        await assertTableInvariants(app.services);
      });
    }

    // The location is the client's, not a fresh one, but no record names the claim either: only
    // the name leads to it, through a withdrawal note its next trash read settles (trash.ts).
    for (const releaseFails of [false, true]) {
    it(`RegisterTable whose claim write lands unanswered takes the claim back${releaseFails ? ' through a note in the trash, its release failing every attempt' : ''}`, async () => {
      await app.fake.client.send(
        new PutObjectCommand({ Bucket: 'wh-bucket', Key: `warehouse/default/ext/c.lance/_versions/${manifestName(1, 'V2')}`, Body: Buffer.from('m') }),
      );
      app.registryStore.place({ op: 'putIfAbsent', key: keyOf.claim(), kind: 'applied-unavailable' });
      if (releaseFails) app.registryStore.place({ op: 'deleteIfMatch', key: keyOf.claim(), kind: 'unavailable', times: PERSIST_ATTEMPTS });
      honest(await app.call('POST', '/v1/table/ns%24c/register', { id: ['ns', 'c'], location: 'ext/c.lance' }));
      expect(app.registryStore.fired()).toHaveLength(releaseFails ? 1 + PERSIST_ATTEMPTS : 1);
      expect((await app.ok('GET', '/v1/table/ns%24c/tasks')).tasks).toEqual([]); // the note is never shown
      await assertTableInvariants(app.services);
      // The location is free again: a registration of it succeeds.
      expect((await app.call('POST', '/v1/table/ns%24c2/register', { id: ['ns', 'c2'], location: 'ext/c.lance' })).status).toBe(200);
    });
    }

    // The marker is a put-if-absent since refused creates must not overwrite another table's (refused-creates.test.ts).
    it('RegisterTable whose marker write fails takes its pending claim back through a failed release', async () => {
      await app.fake.client.send(
        new PutObjectCommand({ Bucket: 'wh-bucket', Key: `warehouse/default/ext/m.lance/_versions/${manifestName(1, 'V2')}`, Body: Buffer.from('m') }),
      );
      app.registryStore.place({ op: 'putIfAbsent', key: (k) => k === keys.dataMarker('default', 'data', ['ns', 'm']), kind: 'unavailable' });
      app.registryStore.place({ op: 'deleteIfMatch', key: keyOf.claim(), kind: 'unavailable' });
      honest(await app.call('POST', '/v1/table/ns%24m/register', { id: ['ns', 'm'], location: 'ext/m.lance' }));
      expect(app.registryStore.fired()).toHaveLength(2);
      await describeTable('ns', 'm');
      await assertTableInvariants(app.services);
    });

    it('DropTable purge=true of a table with data releases its `purging` claim through a 503 on every attempt of the whole purge', async () => {
      const declared = await app.ok('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
      const dataKey = `${String(declared.location).slice('s3://wh-bucket/'.length)}/data/0.lance`;
      await app.fake.client.send(new PutObjectCommand({ Bucket: 'wh-bucket', Key: dataKey, Body: Buffer.from('rows') }));
      // The release after the bytes are gone: one fault more than the drop's attempts at the purge.
      app.registryStore.place({ op: 'deleteIfMatch', key: keyOf.claim(), kind: 'unavailable', times: 3 });
      honest(await app.call('POST', '/v1/table/ns%24t/drop', { id: ['ns', 't'] }, '&purge=true'));
      expect(app.registryStore.fired()).toHaveLength(3);
      await describeTable('ns', 't');
      await assertTableInvariants(app.services);
    });
  });

  describe('what the next read does not reach, reconcile repairs', () => {
    const reconcileNow = () => reconcileWith({ stuckAfterMs: 0 })(app.services, { repair: true });

    it('a declared record left without its claim (claim write unknown, withdrawal failed) gets its claim back', async () => {
      app.registryStore.place({ op: 'putIfAbsent', key: keyOf.claim(), kind: 'unavailable' });
      // Through the door's own attempts at the withdrawal (outcome.ts, persist).
      app.registryStore.place({ op: 'deleteIfMatch', key: keyOf.table(['ns', 't']), kind: 'unavailable', times: PERSIST_ATTEMPTS });
      honest(await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] }));
      expect(app.registryStore.fired()).toHaveLength(1 + PERSIST_ATTEMPTS);
      await expect(assertTableInvariants(app.services)).rejects.toThrow(/no location claim/);
      const report = await reconcileNow();
      expect(report.items).toContainEqual(expect.objectContaining({ kind: 'claim-mismatch', id: ['ns', 't'], state: 'missing' }));
      await assertTableInvariants(app.services);
    });

    it('an undrop interrupted after its record (same name) is finished: claim held, trash record gone', async () => {
      await app.ok('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
      await app.ok('POST', '/v1/table/ns%24t/drop', { id: ['ns', 't'] });
      app.registryStore.place({ op: 'putIfMatch', key: (k, body) => keyOf.claim()(k) && !!body?.includes('"state":"held"'), kind: 'unavailable', times: PERSIST_ATTEMPTS }); // through the door's own attempts (outcome.ts, persist)
      honest(await app.call('POST', '/v1/table/ns%24t/undrop', { id: ['ns', 't'] }));
      expect(app.registryStore.fired()).toHaveLength(PERSIST_ATTEMPTS);
      const report = await reconcileNow();
      expect(report.items).toContainEqual(expect.objectContaining({ kind: 'claim-mismatch', id: ['ns', 't'], state: 'trashed' }));
      await assertTableInvariants(app.services);
      expect((await describeTable('ns', 't')).status).toBe(200);
    });
  });
});

