// @covers ListMaintenanceReports, ListJobs, SetTableProtection, DropTable, UndropTable, ListTableTasks, ListTables, DescribeTable, ListTableVersions, ListTableTags
/**
 * The web console in a real headless Chromium (issue #31, docs/console.md): Debian's `chromium`
 * driven by playwright-core against `npm start`'s server with RASK_AUTH=keys. A table made by
 * the official client is browsed to and read (schema, three versions, a tag), protected (the
 * drop is refused naming the protection), dropped and undropped from the trash view; a
 * `rask maintenance sweep` shows up as a report; a principal without grants in another
 * project gets the same page for that project's real table as for a missing one; and the key
 * is never in a URL, in Web Storage or in the server's log. The 10,000-table namespace's first
 * page is timed here (docs/benchmarks.md, "Console"). Screenshots: SHOTS below.
 */
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { keys } from '../../lib/registry/keys.js';
import { type ConsoleServer, rask, repo, requireChromium, startConsoleServer } from '../support/console-server.js';

const ADMIN = 'console-admin-key-0f1e2d3c4b5a69788796';
/**
 * Where the screenshots go: a scratch directory, or docs/console/ when refreshing the guide's
 * pictures (`RASK_CONSOLE_SHOTS=docs/console npx vitest run test/console`, docs/console.md).
 */
const SHOTS = process.env.RASK_CONSOLE_SHOTS ? path.resolve(repo, process.env.RASK_CONSOLE_SHOTS) : path.join(tmpdir(), 'rask-console-shots');
const BIG = 10_000;

describe('the console in Chromium', () => {
  let server: ConsoleServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let analystKey = '';
  const secrets: string[] = [ADMIN];
  const requested: string[] = [];
  const pageLog: string[] = [];

  const api = async (method: string, p: string, body?: unknown, key = ADMIN) => {
    const res = await fetch(server.url + p, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: () => JSON.parse(text), text };
  };

  const shot = async (name: string) => {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  const open = async (p: Page, hash: string) => {
    // A string: the test is type-checked without the DOM's globals.
    await p.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  };

  async function signInAs(p: Page, key: string) {
    await p.goto(`${server.url}/console/`);
    await p.getByRole('textbox', { name: 'API key' }).fill(key);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  beforeAll(async () => {
    const executablePath = requireChromium();
    server = await startConsoleServer({
      RASK_AUTH: 'keys',
      RASK_ADMIN_KEY: ADMIN,
      RASK_TRASH_GRACE_DAYS: '7',
      // Everything the server does is logged, so the log check below sees the most it can.
      RASK_LOG_LEVEL: 'debug',
      RASK_SWEEP_INTERVAL_MS: '0',
      RASK_INDEX_INTERVAL_MS: '0',
      RASK_RECONCILE_INTERVAL_MS: '0',
      RASK_ORPHANS_INTERVAL_MS: '0',
    });
    // The table, by the official client: three versions and a tag.
    const db = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': ADMIN } } as never);
    await db.createNamespace(['sales']);
    const orders = await db.createTable('orders', [{ id: 1, vector: [1, 2], meta: { region: 'eu', qty: 2 } }], ['sales']);
    await orders.add([{ id: 2, vector: [3, 4], meta: { region: 'us', qty: 1 } }]);
    await orders.add([{ id: 3, vector: [5, 6], meta: { region: 'eu', qty: 7 } }]);
    await (await orders.tags()).create('launch', 1);
    // A second project, and a principal who holds a grant there only.
    expect((await api('POST', '/v1/projects', { name: 'acme' })).status).toBe(200);
    const root = path.join(await realpath(server.dataDir), 'projects', 'acme', 'main');
    const warehouse = await api('POST', '/projects/acme/v1/warehouses', { name: 'main', storage_root: root });
    expect(warehouse.status, warehouse.text).toBe(200);
    const acme = await lancedb.connectNamespace('rest', { uri: `${server.url}/projects/acme`, headers: { 'x-api-key': ADMIN } } as never);
    await acme.createNamespace(['vault']);
    await acme.createTable('plans', [{ id: 1, vector: [0, 1] }], ['vault']);
    expect((await api('POST', '/v1/principals', { name: 'analyst' })).status).toBe(200);
    analystKey = (await api('POST', '/v1/principals/analyst/keys', {})).json().api_key;
    secrets.push(analystKey);
    // The analyst reads acme and holds nothing in the default project.
    expect((await api('POST', '/v1/grants', { principal: 'analyst', role: 'reader', project: 'acme' })).status).toBe(200);
    // 10,000 tables in one namespace, written straight into the registry as bench/listing.ts does.
    expect((await api('POST', '/v1/namespace/big/create', {})).status).toBe(200);
    const registry = new FsObjectStore(path.join(server.dataDir, 'registry'));
    for (let i = 0; i < BIG; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, BIG - i) }, (_, j) => {
          const id = ['big', `t${String(i + j).padStart(5, '0')}`];
          return registry.putIfAbsent(
            keys.table('default', id),
            JSON.stringify({ kind: 'table', id, uid: `u${i + j}`, warehouse: 'default', path: `tables/x${i + j}/t.lance`, managedVersioning: true, properties: {}, origin: 'declared', createdAt: new Date().toISOString() }),
          );
        }),
      );
    }
    await mkdir(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('request', (r) => requested.push(r.url()));
    page.on('console', (m) => pageLog.push(m.text()));
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('serves the sign-in page from rask itself, with nothing from elsewhere', async () => {
    await page.goto(`${server.url}/console`);
    await page.getByRole('heading', { name: 'Sign in to rask' }).waitFor();
    expect(requested).toContain(`${server.url}/console/app.js`);
    await shot('sign-in');
    expect(requested.every((u) => u.startsWith(server.url))).toBe(true);
    // A wrong key is refused with the API's own words and the form stays.
    await page.getByRole('textbox', { name: 'API key' }).fill('not-a-key-0000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/key/i);
  });

  it('signs in with a key and browses to the table: schema, three versions and a tag', async () => {
    await signInAs(page, ADMIN);
    await page.getByRole('link', { name: 'default', exact: true }).click();
    await page.getByRole('heading', { name: 'Project default' }).waitFor();
    await shot('project');
    await page.getByRole('link', { name: 'sales', exact: true }).click();
    await page.getByRole('link', { name: 'orders', exact: true }).click();
    await page.getByRole('heading', { name: 'Table sales.orders' }).waitFor();
    expect(page.url()).toBe(`${server.url}/console/#/p/default/t/sales/orders`);
    const schema = page.getByTestId('schema');
    await schema.waitFor();
    const schemaText = await schema.innerText();
    for (const part of ['id', 'vector', 'vector[2] of float32', 'meta', 'struct', 'region', 'utf8', 'qty']) expect(schemaText).toContain(part);
    const versions = page.getByTestId('versions').locator('tbody tr');
    await expect.poll(() => versions.count()).toBe(3);
    expect(await versions.first().innerText()).toMatch(/^3\b/);
    // Each version with its change stamp from the feed: who, through which door, when.
    const stamps = await page.getByTestId('stamp').allInnerTexts();
    expect(stamps).toHaveLength(3);
    // The official client commits through the catalog's doors (CreateTable, then CreateTableVersion).
    for (const s of stamps) expect(s).toMatch(/^admin · (CreateTable|CreateTableVersion|InsertIntoTable) · \d{4}-/);
    const tags = await page.getByTestId('tags').innerText();
    expect(tags).toMatch(/launch\s+1/);
    await expect.poll(() => page.getByTestId('rows').textContent()).toBe('3');
    expect(await page.getByTestId('policy-source').textContent()).toBe('the built-in defaults');
    await shot('table');
  });

  it('protects the table, and the drop is refused naming the protection', async () => {
    await page.getByLabel(/^Protected/).check();
    await page.getByText('Table sales.orders is now protected.').waitFor();
    expect((await api('GET', '/v1/table/sales%24orders/protection')).json().protected).toBe(true);
    await page.getByRole('button', { name: 'Drop table…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Drop table sales.orders?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Drop sales.orders' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/table \["sales","orders"\] is protected and cannot be dropped/);
    expect((await api('POST', '/v1/table/sales%24orders/describe', {})).status).toBe(200);
  });

  it('drops the table and undrops it from the trash view', async () => {
    await page.getByLabel(/^Protected/).uncheck();
    await page.getByText('Table sales.orders is no longer protected.').waitFor();
    await page.getByRole('button', { name: 'Drop table…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Drop sales.orders' }).click();
    await page.getByRole('heading', { name: 'Trash' }).waitFor();
    const trash = page.getByTestId('trash');
    await trash.waitFor();
    expect(await trash.innerText()).toContain('sales.orders');
    expect((await api('POST', '/v1/table/sales%24orders/describe', {})).status).toBe(404);
    await shot('trash');
    await page.getByRole('button', { name: 'Undrop sales.orders' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Undrop sales.orders' }).click();
    await page.getByText('Table sales.orders is back.').waitFor();
    expect((await api('POST', '/v1/table/sales%24orders/describe', {})).status).toBe(200);
    await page.getByText('Nothing in the trash.').waitFor();
  });

  it('shows the sweep report after `rask maintenance sweep`, on the reports view and the table page', async () => {
    const swept = await rask(['maintenance', 'sweep', '--table', 'sales.orders', '--older-than-days', '0', '--json'], { RASK_DATA_DIR: server.dataDir });
    expect(swept.code, swept.stderr).toBe(0);
    await open(page, '#/p/default/reports');
    const reports = page.getByTestId('reports');
    await reports.waitFor();
    const row = await reports.locator('tbody tr').first().innerText();
    expect(row).toContain('sweep');
    expect(row).toContain('sales.orders');
    // Three single-row fragments compacted into one: two reclaimed.
    expect(row).toMatch(/sales\.orders\s+2\s+\d+/);
    expect(await page.locator('svg.chart rect').count()).toBe(2);
    await shot('reports');
    await open(page, '#/p/default/t/sales/orders');
    const last = page.getByTestId('table-reports');
    await last.waitFor();
    expect(await last.innerText()).toMatch(/sweep.*3 → 1/s);
  });

  it('runs a sweep now from the table page: confirms naming the table, shows progress, then the result and its report', async () => {
    const db = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': ADMIN } } as never);
    await (await db.openTable('orders', ['sales'])).add([{ id: 4, vector: [7, 8], meta: { region: 'us', qty: 3 } }]);
    await open(page, '#/p/default/t/sales/orders');
    await page.getByRole('button', { name: 'Run a sweep now…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sweep table sales.orders now?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Sweep sales.orders' }).click();
    const status = page.getByTestId('sweep-now');
    // The in-process worker (every 2 s) runs the job; the page follows it to the end.
    await status.getByText(/Sweep done/).waitFor({ timeout: 30_000 });
    const text = await status.innerText();
    // The sweep of a moment ago left one fragment; the new row added a second: two into one.
    expect(text).toMatch(/fragments 2 → 1/);
    const report = /report (reports\/sweep\/\S+\.json)/.exec(text)?.[1];
    expect(report).toBeDefined();
    // The same report is the newest the reports door answers for the table (named there by its base name).
    const reports = (await api('GET', '/v1/maintenance/reports?pass=sweep&table=sales%24orders')).json().reports;
    expect(report?.endsWith(`/${reports[0].report}.json`), `${report} vs ${reports[0].report}`).toBe(true);
    expect(await page.getByTestId('table-reports').innerText()).toMatch(/sweep.*2 → 1/s);
    await shot('sweep-now');
  });

  it('shows jobs, change events and the access pages', async () => {
    await open(page, '#/p/default/jobs');
    await page.getByRole('heading', { name: 'Queued and running' }).waitFor();
    await shot('jobs');
    await open(page, '#/p/default/changes');
    const changes = page.getByTestId('changes');
    await changes.waitFor();
    const text = await changes.innerText();
    for (const type of ['dev.rask.table.dropped', 'dev.rask.table.undropped', 'dev.rask.table.protection_set']) expect(text).toContain(type);
    await page.getByLabel('Filter').fill('undropped');
    await expect.poll(() => changes.locator('tbody tr').count()).toBe(1);
    await shot('changes');
    await open(page, '#/p/acme/admin');
    await page.getByRole('button', { name: 'analyst', exact: true }).click();
    await page.getByTestId('keys').waitFor();
    expect(await page.getByTestId('grants').innerText()).toMatch(/analyst\s+reader\s+the project/);
    await shot('access');
    // A new key's secret is shown once, and it works.
    await page.getByRole('button', { name: 'Create key for analyst' }).click();
    const secret = await page.getByLabel('Secret').inputValue();
    secrets.push(secret);
    expect((await api('POST', '/projects/acme/v1/table/vault%24plans/describe', {}, secret)).status).toBe(200);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByLabel('Secret').count()).toBe(0);
  });

  it('shows the trash and the change events newest first, and pages back to older ones', async () => {
    // A drop, then more than a feed page (200) of later changes on top of it (namespaces named
    // to sort after every other, so the pages of the tests below look as they did).
    const db = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': ADMIN } } as never);
    await db.createTable('scratch', [{ id: 1 }], ['sales']);
    const dropped = await api('POST', '/v1/table/sales%24scratch/drop', {});
    expect(dropped.status, dropped.text).toBe(200);
    for (let i = 0; i < 205; i += 41) {
      await Promise.all(Array.from({ length: 41 }, (_, j) => api('POST', `/v1/namespace/zz${String(i + j).padStart(3, '0')}/create`, {})));
    }
    await open(page, '#/p/default/trash');
    await page.getByText('Nothing in the trash.').waitFor();
    await page.getByRole('button', { name: 'Look further back' }).click();
    const trash = page.getByTestId('trash');
    await trash.waitFor();
    expect(await trash.innerText()).toContain('sales.scratch');

    await open(page, '#/p/default/changes');
    const rows = page.getByTestId('changes').locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(200);
    const firstPage = await rows.allInnerTexts();
    // Newest first is the log's order backwards (an event's `time` is its request's start, so
    // concurrent requests may log out of time order): the forward feed, reversed.
    const forward = (await api('GET', '/v1/changes?limit=1000')).json().events as any[];
    const columns = (texts: string[]) => texts.map((t) => t.split('\t').slice(1, 3).join(' '));
    const reversed = forward.map((e) => `${e.type} ${e.subject}`).reverse();
    expect(columns(firstPage)).toEqual(reversed.slice(0, 200));
    expect(firstPage.join('\n')).not.toContain('dev.rask.table.dropped');
    await page.getByRole('button', { name: 'Older events' }).click();
    await expect.poll(() => rows.count()).toBeGreaterThan(200);
    await page.getByText('The oldest event held is shown.').waitFor();
    const all = await rows.allInnerTexts();
    expect(all.slice(0, 200)).toEqual(firstPage);
    expect(columns(all)).toEqual(reversed);
    expect(all.join('\n')).toContain('table:sales.scratch');
  });

  it(`renders the first page of ${BIG.toLocaleString('en')} tables, pages on and searches by name`, async () => {
    const list = page.getByTestId('table-list');
    const timings: number[] = [];
    for (let round = 0; round < 5; round++) {
      await open(page, '#/p/default');
      await page.getByRole('heading', { name: 'Project default' }).waitFor();
      const started = await page.evaluate(() => performance.now());
      await open(page, '#/p/default/ns/big');
      await list.locator('li').nth(99).waitFor();
      timings.push((await page.evaluate(() => performance.now())) - started);
    }
    timings.sort((a, b) => a - b);
    const median = timings[2]!;
    // Recorded in docs/benchmarks.md ("Console"); the bound is the issue's, on the median.
    await writeFile(path.join(SHOTS, 'first-page-ms.json'), `${JSON.stringify({ tables: BIG, runs_ms: timings.map((t) => Math.round(t)), median_ms: Math.round(median) })}\n`);
    console.log(`console: first page of ${BIG} tables in ${timings.map((t) => t.toFixed(0)).join(', ')} ms (median ${median.toFixed(0)})`);
    expect(median).toBeLessThan(1000);
    expect(await list.locator('li').first().innerText()).toBe('t00000');
    await shot('tables');
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => list.locator('li').first().innerText()).toBe('t00100');
    await page.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(() => list.locator('li').first().innerText()).toBe('t00000');
    await page.getByLabel('Tables whose name begins with').fill('t0987');
    await expect.poll(() => list.locator('li').count()).toBe(10);
    expect(await list.locator('li').allInnerTexts()).toEqual(Array.from({ length: 10 }, (_, i) => `t0987${i}`));
    await page.getByLabel('Tables whose name begins with').fill('t09999');
    await expect.poll(() => list.locator('li').allInnerTexts()).toEqual(['t09999']);
  });

  it("a principal without grants in another project sees none of it, by link as for a missing object", async () => {
    const other = await (await browser.newContext()).newPage();
    other.on('request', (r) => requested.push(r.url()));
    await signInAs(other, analystKey);
    await other.getByText('Listing every project needs a platform administrator').waitFor();
    const answerFor = async (hash: string) => {
      await open(other, hash);
      await other.getByRole('heading', { level: 1 }).waitFor();
      const alert = other.getByRole('alert');
      await alert.first().waitFor();
      return (await other.locator('main').innerText()).replaceAll(/orders|nothere/g, 'NAME');
    };
    const real = await answerFor('#/p/default/t/sales/orders');
    const missing = await answerFor('#/p/default/t/sales/nothere');
    expect(real).toBe(missing);
    expect(real).not.toContain('location');
    // Nor through the namespace or the project page.
    const ns = await answerFor('#/p/default/ns/sales');
    expect(ns).not.toContain('NAME');
    await open(other, '#/p/default');
    await other.getByRole('heading', { name: 'Project default' }).waitFor();
    await other.getByRole('alert').first().waitFor();
    expect(await other.locator('main').innerText()).not.toContain('sales');
    // The project it holds a grant in is readable, down to the table.
    await open(other, '#/p/acme/t/vault/plans');
    await other.getByTestId('schema').waitFor();
    expect(await other.getByTestId('schema').innerText()).toContain('vector[2] of float32');
    await other.context().close();
  });

  it('never puts a key in a URL, in Web Storage, in a cookie, in the page log or in the server log', async () => {
    const stored = await page.evaluate('({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })');
    expect(stored).toEqual({ local: 0, session: 0, cookie: '' });
    expect(requested.length).toBeGreaterThan(50);
    for (const secret of secrets) {
      expect(requested.filter((u) => u.includes(secret))).toEqual([]);
      expect(pageLog.filter((l) => l.includes(secret))).toEqual([]);
      expect(server.log().includes(secret)).toBe(false);
    }
    // The log did record the console's requests (so the check above looked at something).
    expect(server.log()).toContain('/console/app.js');
    // Reloading signs out: the credential lived in the page's memory only.
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to rask' }).waitFor();
  });
});
