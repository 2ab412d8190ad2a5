/**
 * The Lambda API functions' lazily loaded handler maps (lib/operations/handlers-lazy.ts, issue
 * #37): the same operations as the eager maps the local server uses, and each module loaded on
 * the first request that needs it, once, with a failed load retried by the next request.
 */
import { describe, expect, it } from 'vitest';
import { HANDLER_EXPORTS } from '../../lib/contract/operations.js';
import type { OperationRequest } from '../../lib/contract/request.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { CatalogError, ErrorCode } from '../../lib/errors.js';
import { allHandlers } from '../../lib/operations/handlers-all.js';
import { lazyAllHandlers } from '../../lib/operations/handlers-all-lazy.js';
import { lazyHandlers, type LoadedHandlers } from '../../lib/operations/handlers-lazy.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { lazyMetaHandlers } from '../../lib/operations/handlers-meta-lazy.js';

const request = (id: readonly string[] = ['ns', 't']) => ({ id }) as unknown as OperationRequest;
const services = {} as CatalogServices;

describe('lazy handler maps', () => {
  it('hold exactly the operations of the eager maps', () => {
    expect(Object.keys(lazyMetaHandlers()).sort()).toEqual(Object.keys(metaHandlers).sort());
    expect(Object.keys(lazyAllHandlers()).sort()).toEqual(Object.keys(allHandlers).sort());
    // Every handler module has a loader (the data function's map covers all of them).
    expect(Object.keys(lazyAllHandlers()).length).toBeGreaterThan(Object.keys(metaHandlers).length);
    expect(Object.keys(HANDLER_EXPORTS).length).toBe(13);
  });

  it('load a module on its first request only, once for concurrent first requests', async () => {
    let loads = 0;
    const seen: string[] = [];
    const module: LoadedHandlers = {
      DescribeTable: async (req) => {
        seen.push(`describe ${req.id.join('.')}`);
        return { described: req.id };
      },
      ListTables: async () => ['t'],
    };
    const map = lazyHandlers({
      'lib/operations/handlers-table.ts': async () => {
        loads++;
        await new Promise((r) => setTimeout(r, 5));
        return module;
      },
    });
    // Only the module's own operations, and nothing loaded yet.
    expect(Object.keys(map)).toContain('DescribeTable');
    expect(Object.keys(map)).not.toContain('CreateNamespace');
    expect(loads).toBe(0);
    const answers = await Promise.all([map.DescribeTable!(request(['a']), services), map.DescribeTable!(request(['b']), services), map.ListTables!(request(), services)]);
    expect(answers).toEqual([{ described: ['a'] }, { described: ['b'] }, ['t']]);
    expect(seen).toEqual(['describe a', 'describe b']);
    expect(loads).toBe(1);
    await map.TableExists!(request(), services).catch((err: unknown) => expect(String(err)).toMatch(/has no handler for TableExists/));
    expect(loads).toBe(1);
  });

  it('retry a module whose load failed', async () => {
    let loads = 0;
    const map = lazyHandlers({
      'lib/operations/handlers-namespace.ts': async () => {
        loads++;
        if (loads === 1) throw new Error('chunk unreadable');
        return { ListNamespaces: async () => ({ namespaces: [] }) };
      },
    });
    await expect(map.ListNamespaces!(request([]), services)).rejects.toThrow('chunk unreadable');
    await expect(map.ListNamespaces!(request([]), services)).resolves.toEqual({ namespaces: [] });
    expect(loads).toBe(2);
  });

  it('the real data map renames LanceDB table names in errors, as the eager one does', async () => {
    // QueryTable on a table that the services cannot resolve fails before the engine: the
    // error passes through the renaming wrapper of handlers-data.ts / handlers-all-lazy.ts.
    const lazy = lazyAllHandlers();
    const failing = {
      get registry() {
        throw new CatalogError(ErrorCode.TableNotFound, "Table 'abc' was not found");
      },
    } as unknown as CatalogServices;
    const message = (p: Promise<unknown>) => p.then(() => 'no error', (err: unknown) => (err as Error).message);
    const [eager, viaLazy] = [await message(allHandlers.QueryTable!(request(['ns', 't']), failing)), await message(lazy.QueryTable!(request(['ns', 't']), failing))];
    expect(viaLazy).toBe(eager);
    expect(viaLazy).toMatch(/^table \["ns","t"\] was not found$/);
  });
});
