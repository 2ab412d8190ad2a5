/**
 * The scheduled maintenance handler: one slice per invocation, the cursor kept in the registry
 * between invocations, a report written only when a run found or did something, and an
 * incomplete run made loud (it throws, so Lambda counts an error and the failure destination
 * gets the event).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { cursorKey, IncompletePassError, maintenanceHandler, reportsPrefix } from '../../lib/maintenance/lambda.js';
import type { MaintenancePass, PassReport } from '../../lib/maintenance/pass.js';
import { reconcileWith } from '../../lib/maintenance/reconcile.js';
import { keys } from '../../lib/registry/keys.js';
import type { NamespaceRecord } from '../../lib/registry/records.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

const context = (remainingMs: number) => ({ awsRequestId: 'req-1', getRemainingTimeInMillis: () => remainingMs });
const quiet = () => undefined;

describe('maintenance handler', () => {
  let f: ServicesFixture;
  let s: CatalogServices;
  beforeEach(async () => {
    f = await servicesOver('memory');
    s = f.services;
  });
  afterEach(() => f.cleanup());

  const reports = async () => (await s.registry.store.list({ prefix: reportsPrefix('reconcile') })).objects.map((o) => o.key).filter((k) => !k.endsWith('cursor.json'));

  it('writes no report for an idle run', async () => {
    const handler = maintenanceHandler({ name: 'reconcile', pass: reconcileWith(), services: async () => s, reserveMs: 0, log: quiet });
    const out = await handler({}, context(60_000));
    expect(out).toMatchObject({ pass: 'reconcile', items: 0, continues: false });
    expect(await reports()).toEqual([]);
    expect(await s.registry.store.get(cursorKey('reconcile'))).toBeUndefined();
  });

  it('continues across invocations from the cursor it saved, and writes each finding slice a report', async () => {
    for (const ns of ['a', 'b', 'c']) {
      await createNamespace(s, { id: [ns], mode: 'create', properties: {} });
      await createNamespace(s, { id: [ns, 'child'], mode: 'create', properties: {} });
      // Parent gone: each child is a finding.
      const parent = (await s.registry.read<NamespaceRecord>(keys.namespace(s.project, [ns])))!;
      await s.registry.remove(keys.namespace(s.project, [ns]), parent.etag);
    }
    // No time left in any invocation: each slice does one unit and saves where it stopped.
    const handler = maintenanceHandler({ name: 'reconcile', pass: reconcileWith(), services: async () => s, reserveMs: 60_000, log: quiet });
    let invocations = 0;
    let found = 0;
    for (;;) {
      const out = await handler({}, context(1_000));
      invocations++;
      found += out.items;
      if (!out.continues) break;
      expect(await s.registry.store.get(cursorKey('reconcile'))).toBeDefined();
      expect(invocations).toBeLessThan(50);
    }
    expect(invocations).toBeGreaterThan(2);
    expect(found).toBe(3);
    expect(await reports()).toHaveLength(3);
    // The finished pass leaves no cursor: the next run starts from the beginning.
    expect(await s.registry.store.get(cursorKey('reconcile'))).toBeUndefined();
  });

  it('throws after saving its report when the pass could not cover everything', async () => {
    const incomplete: MaintenancePass = async (): Promise<PassReport> => ({
      pass: 'reconcile',
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
      complete: false,
      summary: {},
      items: [],
      problems: ['the registry could not be read: AccessDenied'],
    });
    const handler = maintenanceHandler({ name: 'reconcile', pass: incomplete, services: async () => s, reserveMs: 0, log: quiet });
    await expect(handler({}, context(60_000))).rejects.toBeInstanceOf(IncompletePassError);
    const [key] = await reports();
    expect(JSON.parse((await s.registry.store.get(key))!.body.toString())).toMatchObject({ complete: false, problems: [expect.stringMatching(/AccessDenied/)] });
  });
});
