// @covers ListTableVersions, ListChanges
/**
 * The table page's versions with their change stamps (docs/console.md, "Versions and their change
 * stamps"), in headless Chromium on the server `npm start` runs: a version a door committed shows
 * who committed it and through which door; a version a plain `lancedb.connect(dir)` writer
 * committed straight to the table's storage shows that, once the change relay has found it (its
 * timer runs every 300 ms here). A server of its own: the relay's scan would otherwise walk the
 * 10,000 tables of the main console test on every cycle.
 */
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, requireChromium, startConsoleServer } from '../support/console-server.js';

const ADMIN = 'console-stamps-admin-key-5a4b3c2d1e0f';

describe('version stamps on the table page', () => {
  let server: ConsoleServer;
  let browser: Browser;

  const feed = async () => {
    const res = await fetch(`${server.url}/v1/changes?order=newest_first&limit=100`, { headers: { 'x-api-key': ADMIN } });
    return ((await res.json()) as any).events as any[];
  };

  beforeAll(async () => {
    const executablePath = requireChromium();
    server = await startConsoleServer({
      RASK_AUTH: 'keys',
      RASK_ADMIN_KEY: ADMIN,
      RASK_CHANGES_SCAN_INTERVAL_MS: '300',
      RASK_CHANGES_SETTLE_MS: '100',
      RASK_SWEEP_INTERVAL_MS: '0',
      RASK_INDEX_INTERVAL_MS: '0',
      RASK_RECONCILE_INTERVAL_MS: '0',
      RASK_ORPHANS_INTERVAL_MS: '0',
    });
    const db = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': ADMIN } } as never);
    await db.createNamespace(['sales']);
    const table = await db.createTable('direct', [{ id: 1 }], ['sales']);
    await table.add([{ id: 2 }]);
    const described = await fetch(`${server.url}/v1/table/sales%24direct/describe`, { method: 'POST', headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' }, body: '{}' });
    const location: string = ((await described.json()) as any).location;
    expect(location, JSON.stringify(location)).toEqual(expect.any(String));
    // The relay's first cycle only notes where each table stands: let it see version 2 first.
    await new Promise((r) => setTimeout(r, 1500));
    const direct = await (await lancedb.connect(path.dirname(location))).openTable(path.basename(location).replace(/\.lance$/, ''));
    await direct.add([{ id: 3 }]);
    // The relay announces the direct commit within a cycle or two.
    for (let tries = 0; !(await feed()).some((e) => e.data.details?.via === 'storage' && e.data.version === 3); tries++) {
      if (tries > 60) throw new Error(`no storage event for version 3 in the feed: ${JSON.stringify(await feed())}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('names the principal and door of each catalog commit, and says which version was committed straight to storage', async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${server.url}/console/`);
    await page.getByRole('textbox', { name: 'API key' }).fill(ADMIN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.evaluate(`location.hash = ${JSON.stringify('#/p/default/t/sales/direct')}`);
    const rows = page.getByTestId('versions').locator('tbody tr');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(3).catch(async (e) => {
      throw new Error(`${e}\n${await page.locator('main').innerText()}`);
    });
    const text = await rows.allInnerTexts();
    expect(text[0]).toMatch(/^3\s.*committed straight to storage/s);
    // Versions 1 and 2: the principal and the door the feed names for the event of that version.
    const events = await feed();
    for (const v of [1, 2]) {
      const door = events.find((e) => e.data.kind === 'table' && e.data.version === v && e.data.details?.via !== 'storage');
      expect(door, `the event of version ${v}`).toBeDefined();
      expect(text[3 - v]).toMatch(new RegExp(`^${v}\\s.*${door.data.principal} · ${door.data.operation} · `, 's'));
      expect(text[3 - v]).not.toContain('storage');
    }
  });
});
