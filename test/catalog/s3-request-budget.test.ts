// @covers DescribeTable, DescribeNamespace, ListTables, ListAllTables, ListNamespaces, CreateNamespace, DeclareTable, CreateTableVersion, DropTable, DeregisterTable, RenameTable
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureMetadataOperations, requestTable, type BudgetRun } from '../support/request-budget.js';

/**
 * What each metadata operation costs in S3 requests, counted through the metadata Lambda's own
 * composition (createAwsApp over the stateful S3 fake), and how many of them wait for one another.
 * On AWS a metadata call's latency and bill are its S3 round trips, so these counts are the
 * performance contract (issue #12). Counts, not timings: the fake injects a fixed latency per
 * request only so that requests sent together overlap, and the serial count is read from the
 * order in which requests started and finished, never from a clock.
 */

/**
 * Operations still over the issue's budget: their budget tests are expected to fail (a ratchet:
 * once one comes within budget, `it.fails` fails and it must be taken off this list).
 */
const OVER_BUDGET: Record<string, { requests?: true; serial?: true }> = {};

describe('S3 requests per metadata operation (issue #12 budgets)', () => {
  let run: BudgetRun;
  beforeAll(async () => {
    run = await measureMetadataOperations();
  }, 60_000);
  afterAll(() => {
    run?.restore();
    if (run) console.log(`\n${requestTable(run.results)}`);
  });

  const operations = [
    'first invocation of a container',
    'CreateNamespace (nested)',
    'DeclareTable',
    'DescribeTable',
    'DescribeNamespace',
    'ListNamespaces',
    'ListTables',
    'CreateTableVersion (version 2)',
    'CreateTableVersion (version 3, no e_tag)',
    'RenameTable',
    'DropTable (declared-only)',
    'DeregisterTable',
    'ListTables include_declared=false, page of 100 among 1,000 declared-only',
    'ListAllTables, limit 100',
  ];
  for (const operation of operations) {
    const over = OVER_BUDGET[operation] ?? {};
    (over.requests ? it.fails : it)(`${operation} stays within its request budget`, () => {
      const r = run.results.find((x) => x.operation === operation)!;
      expect(r, operation).toBeDefined();
      expect(r.requests.length).toBeLessThanOrEqual(r.budget.requests);
      if (r.budget.only) expect(r.requests.filter((q) => !r.budget.only!.includes(q.op))).toEqual([]);
      expect(r.requests.filter((q) => q.conditional && q.failed && q.op === 'PUT')).toEqual([]);
      if (operation.startsWith('ListAllTables')) {
        // No more keys asked of S3 than the page needs.
        for (const q of r.requests.filter((x) => x.op === 'LIST')) expect(q.maxKeys ?? 1000).toBeLessThanOrEqual(101);
      }
    });
    (over.serial ? it.fails : it)(`${operation} stays within its serial round-trip budget`, () => {
      const r = run.results.find((x) => x.operation === operation)!;
      expect(r, operation).toBeDefined();
      expect(r.serial).toBeLessThanOrEqual(r.budget.serial);
    });
  }

  // The mutations among them: each appends its event to the change log, once, as its last round
  // trip (the one the synchronous PutEvents took before the relay; docs/events.md, "Delivery").
  const MUTATIONS = new Set(['CreateNamespace (nested)', 'DeclareTable', 'CreateTableVersion (version 2)', 'CreateTableVersion (version 3, no e_tag)', 'RenameTable', 'DropTable (declared-only)', 'DeregisterTable']);
  for (const operation of operations) {
    it(`${operation}: ${MUTATIONS.has(operation) ? 'one change-log append, after the door' : 'no change-log request'}`, () => {
      const r = run.results.find((x) => x.operation === operation)!;
      const mutation = MUTATIONS.has(operation);
      expect(r.appends.map((q) => [q.op, q.conditional])).toEqual(mutation ? [['PUT', true]] : []);
      expect(r.serialWithAppend).toBe(r.serial + (mutation ? 1 : 0));
    });
  }

  it('ListAllTables pages of at most 100, followed by their tokens, list every table exactly once', async () => {
    const all = ((await run.call('GET', '/v1/table')) as { tables: string[] }).tables;
    expect(all.length).toBeGreaterThan(1000);
    const paged: string[] = [];
    let token: string | undefined;
    for (let n = 0; n < 100; n++) {
      const query = `&limit=100${token === undefined ? '' : `&page_token=${encodeURIComponent(token)}`}`;
      const page = (await run.call('GET', '/v1/table', undefined, query)) as { tables: string[]; page_token?: string };
      expect(page.tables.length).toBeLessThanOrEqual(100);
      if (page.page_token !== undefined) expect(page.page_token).toBe(page.tables[page.tables.length - 1]);
      paged.push(...page.tables);
      token = page.page_token;
      if (token === undefined) break;
    }
    expect(token).toBeUndefined();
    expect(paged).toEqual(all);
  });

  it('the page of ListTables include_declared=false lists only tables with data', async () => {
    expect(await run.call('GET', '/v1/namespace/many/table/list', undefined, '&include_declared=false&limit=100')).toEqual({ tables: [] });
    expect(await run.call('GET', '/v1/namespace/ns/table/list', undefined, '&include_declared=false')).toEqual({ tables: ['t'] });
  });
});
