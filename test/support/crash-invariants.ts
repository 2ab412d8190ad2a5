import { expect } from 'vitest';
import { keys, parseTreeKey } from '../../lib/registry/keys.js';
import type { LocationClaimRecord, NamespaceRecord, TableRecord } from '../../lib/registry/records.js';
import type { Registry } from '../../lib/registry/registry.js';

/**
 * The registry-wide invariants of the crash test (test/crash/crash-consistency.test.ts), once the
 * objects have been read after a restart (or after `rask registry restore`,
 * test/unit/registry-restore.test.ts): no namespace left `dropping`; every table record active,
 * in an active namespace, on a location of its own (no two live tables on one location or uid),
 * its claim carrying its uid, `held` or `pending` (a pending claim whose id holds a live record at
 * its location is live: docs/protocols.md). Answers the table records, for the caller's own model.
 */
export async function assertCrashInvariants(registry: Registry, project: string, where = ''): Promise<TableRecord[]> {
  const at = where ? `${where}: ` : '';
  const listed = await registry.store.list({ prefix: keys.subtree(project, []) });
  const tables: TableRecord[] = [];
  for (const obj of listed.objects) {
    const kind = parseTreeKey(project, obj.key)?.kind;
    const rec = (await registry.read<NamespaceRecord | TableRecord>(obj.key))?.value;
    if (!rec) continue;
    if (kind === 'namespace') expect((rec as NamespaceRecord).state, `${at}zombie namespace ${rec.id.join('.')}`).toBe('active');
    if (kind === 'table') tables.push(rec as TableRecord);
  }
  const locations = new Set<string>();
  const uids = new Set<string>();
  for (const t of tables) {
    expect(t.state ?? 'active', `${at}${t.id.join('.')} left mid-rename`).toBe('active');
    const parent = await registry.read<NamespaceRecord>(keys.namespace(project, t.id.slice(0, -1)));
    expect(parent?.value.state, `${at}table ${t.id.join('.')} without a live namespace`).toBe('active');
    expect(locations.has(t.path), `${at}two live tables on ${t.path}`).toBe(false);
    expect(uids.has(t.uid), `${at}two live records of table ${t.uid}`).toBe(false);
    locations.add(t.path);
    uids.add(t.uid);
    const claim = await registry.read<LocationClaimRecord>(keys.locationClaim(project, t.warehouse, t.path));
    expect(claim?.value.uid, `${at}claim of ${t.id.join('.')}`).toBe(t.uid);
    expect(['held', 'pending'], `${at}claim state of ${t.id.join('.')}`).toContain(claim?.value.state);
  }
  return tables;
}
