/**
 * Defect 8 of issue #8: at start-up the local server deletes what crashes provably left dead
 * (staged temp files and lock files older than their bound) and logs one line summarising what
 * the reconcile pass should look at. Leftovers are planted by hand in a real data directory,
 * then the server is started on it.
 */
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../lib/observability/logger.js';
import { startLocalServer, type RunningServer } from '../../lib/app/server.js';
import { TMP_STALE_MS } from '../../lib/app/startup-cleanup.js';
import { createLocalApp } from '../../lib/app/local.js';
import { loadLocalConfig } from '../../lib/config.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { readTable, tableKey } from '../../lib/catalog/protocols/lookup.js';
import { keys } from '../../lib/registry/keys.js';
import type { LocationClaimRecord, NamespaceRecord } from '../../lib/registry/records.js';

let dir: string | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await server?.close();
  server = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

const config = (dataDir: string) =>
  loadLocalConfig({ RASK_PORT: '0', RASK_HOST: '127.0.0.1', RASK_DATA_DIR: dataDir, RASK_JOBS_INTERVAL_MS: '0' });

async function plant(file: string, ageMs: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, 'x');
  const t = (Date.now() - ageMs) / 1000;
  await utimes(file, t, t);
}

describe('start-up cleanup', () => {
  it('deletes stale temp and lock files, keeps fresh ones, and reports what reconcile should see', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rask-startup-'));
    // A first life: a catalog with a few objects, then leftovers as crashes leave them.
    const app = await createLocalApp(config(dir));
    const s = app.services;
    await createNamespace(s, { id: ['ns'], mode: 'create', properties: {} });
    await createNamespace(s, { id: ['gone'], mode: 'create', properties: {} });
    for (const t of ['live', 'lost', 'purged']) await declareTable(s, { id: ['ns', t], properties: {}, identity: {} });
    // A table whose record went but whose claim stayed `held` (a crash mid-drop).
    const lost = (await readTable(s, ['ns', 'lost']))!;
    await s.registry.remove(tableKey(s, ['ns', 'lost']), lost.etag);
    // One whose claim stayed `purging`.
    const purged = (await readTable(s, ['ns', 'purged']))!;
    await s.registry.remove(tableKey(s, ['ns', 'purged']), purged.etag);
    const claimKey = keys.locationClaim(s.project, purged.value.warehouse, purged.value.path);
    const claim = (await s.registry.read<LocationClaimRecord>(claimKey))!;
    await s.registry.replace(claimKey, { ...claim.value, state: 'purging' }, claim.etag);
    // A namespace left `dropping`.
    const gone = (await s.registry.read<NamespaceRecord>(keys.namespace(s.project, ['gone'])))!;
    await s.registry.replace(keys.namespace(s.project, ['gone']), { ...gone.value, state: 'dropping' }, gone.etag);
    // A dataset folder no claim covers (a CreateTable that died before its record).
    const warehouse = path.join(dir, 'warehouses', 'default');
    await plant(path.join(warehouse, 'tables', 'deadbeef00000000', 'orphan.lance', '_versions', '1.manifest'), 0);
    // Temp and lock files: old ones are dead, fresh ones may belong to a live writer.
    await plant(path.join(dir, 'registry', '.tmp', '123-old'), TMP_STALE_MS + 60_000);
    await plant(path.join(dir, 'registry', '.tmp', '123-fresh'), 0);
    await plant(path.join(warehouse, '.tmp', '456-old'), TMP_STALE_MS + 60_000);
    await plant(path.join(dir, 'registry', '.locks', 'aa.lock'), 60_000);
    await plant(path.join(dir, 'registry', '.locks', 'bb.lock.stale-1234'), 60_000);
    await plant(path.join(warehouse, '.locks', 'cc.lock'), 0);

    const logged: string[] = [];
    const logger = createLogger({ service: 'rask', format: 'json', sink: (line) => void logged.push(line) });
    server = await startLocalServer(config(dir), { logger });

    expect(server.startup).toEqual({
      removedTmpFiles: 2,
      removedLockFiles: 2,
      claimsWithoutRecord: 1,
      purgingClaims: 1,
      unreferencedDatasetDirs: 1,
      droppingNamespaces: 1,
      unsettledTables: 0,
      scanTruncated: false,
    });
    expect(await readdir(path.join(dir, 'registry', '.tmp'))).toEqual(['123-fresh']);
    expect(await readdir(path.join(warehouse, '.tmp'))).toEqual([]);
    expect(await readdir(path.join(dir, 'registry', '.locks'))).toEqual([]);
    expect(await readdir(path.join(warehouse, '.locks'))).toEqual(['cc.lock']);
    // Reported, not deleted: the claims and the folder are the reconcile pass's to judge.
    expect(await s.registry.read(claimKey)).toBeDefined();
    expect(await readdir(path.join(warehouse, 'tables', 'deadbeef00000000'))).toEqual(['orphan.lance']);
    // Exactly one summary line.
    const lines = logged.filter((l) => l.includes('start-up cleanup'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'INFO', message: 'start-up cleanup', removedTmpFiles: 2, claimsWithoutRecord: 1 });
  });

  it('a clean directory reports zeros', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rask-startup-'));
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    server = await startLocalServer(config(dir));
    expect(Object.values(server.startup).every((v) => v === 0 || v === false)).toBe(true);
  });
});
