/**
 * The operation table's columns (lib/contract/operation-columns.ts, issue 25 item 3): each row
 * names its handler module, and the guard's facts (destructive, creates, scope) are columns
 * rather than id sets in lib/governance/guard.ts. The pinning test keeps the sets the guard
 * held before they became columns, so moving them changed no decision.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_OPERATIONS, HANDLER_EXPORTS, type HandlerModule, type OperationId, type UnsupportedOperationId } from '../../lib/contract/operations.js';
import type { HandlersOf, OperationHandler } from '../../lib/contract/request.js';
import { UNSUPPORTED_REASONS } from '../../lib/contract/unsupported.js';
import { allHandlers } from '../../lib/operations/handlers-all.js';
import { dataHandlers } from '../../lib/operations/handlers-data.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';

const ids = (pick: (o: (typeof ALL_OPERATIONS)[number]) => boolean) => ALL_OPERATIONS.filter(pick).map((o) => o.operationId).sort();
const sorted = (list: readonly string[]) => [...list].sort();

describe('the guard columns reproduce the id sets lib/governance/guard.ts held', () => {
  it('destructive', () => {
    expect(ids((o) => o.destructive)).toEqual(
      sorted(['DropTable', 'DeregisterTable', 'RenameTable', 'DropNamespace', 'DeleteWarehouse', 'DeactivateWarehouse', 'ActivateWarehouse', 'DeleteProject']),
    );
  });

  it('scope: platform, project parameter, object; every other control door the addressed project; spec rows none', () => {
    expect(ids((o) => o.scope === 'platform')).toEqual(
      sorted(['CreateProject', 'ListProjects', 'CreatePrincipal', 'ListPrincipals', 'CreateApiKey', 'ListApiKeys', 'RevokeApiKey', 'GetPrincipalLimits', 'SetPrincipalLimits']),
    );
    expect(ids((o) => o.scope === 'project-param')).toEqual(sorted(['DescribeProject', 'UpdateProject', 'DeleteProject']));
    expect(ids((o) => o.scope === 'object')).toEqual(sorted(['UndropTable', 'ListTableTasks', 'UndropNamespace', 'ListNamespaceTasks']));
    expect(ids((o) => o.scope === 'events')).toEqual(sorted(['ListChanges', 'GetRequestChanges', 'ListMaintenanceReports', 'ListJobs']));
    expect(ids((o) => o.plane === 'control' && o.scope !== 'project' && o.scope !== 'platform' && o.scope !== 'project-param' && o.scope !== 'object' && o.scope !== 'events')).toEqual([]);
    expect(ids((o) => o.plane !== 'control' && o.scope !== undefined)).toEqual([]);
  });

  it('creates', () => {
    expect(ids((o) => o.creates === 'namespace')).toEqual(['CreateNamespace']);
    expect(ids((o) => o.creates === 'table')).toEqual(sorted(['DeclareTable', 'CreateTable', 'RegisterTable', 'CreateMaterializedView']));
    expect(ids((o) => o.creates !== undefined && o.creates !== 'namespace' && o.creates !== 'table')).toEqual([]);
  });
});

describe('the handler column', () => {
  it.each(Object.entries(HANDLER_EXPORTS))('%s exists and exports %s with exactly the handlers its rows name', async (file, exportName) => {
    const module = (await import(path.join('../..', file))) as Record<string, Record<string, unknown> | undefined>;
    const map = module[exportName];
    expect(map, `${file} exports ${exportName}`).toBeDefined();
    expect(sorted(Object.keys(map!))).toEqual(ids((o) => o.handler === file));
    for (const [id, handler] of Object.entries(map!)) expect(typeof handler, id).toBe('function');
  });

  it('names a module for every operation with a handler, and a reason for every one without', () => {
    expect(ids((o) => o.handler !== undefined)).toEqual(sorted(Object.keys(allHandlers)));
    expect(ids((o) => o.handler === undefined)).toEqual(sorted(Object.keys(UNSUPPORTED_REASONS)));
  });

  it('agrees with the bundle column: data handlers live under lib/operations/data/ and serve the data bundle', () => {
    const inData = (o: (typeof ALL_OPERATIONS)[number]) => o.handler?.startsWith('lib/operations/data/') === true;
    expect(ids((o) => o.handler !== undefined && inData(o) !== (o.bundle === 'data'))).toEqual([]);
    expect(ids((o) => o.handler !== undefined && o.bundle === 'meta')).toEqual(sorted(Object.keys(metaHandlers)));
    expect(ids((o) => o.handler !== undefined && o.bundle === 'data')).toEqual(sorted(Object.keys(dataHandlers)));
  });
});

describe('the types derived from the table reject what the tests above would catch only at run time', () => {
  // Checked by `tsc --noEmit`: each @ts-expect-error fails the type check if its line compiles.
  const h: OperationHandler<unknown> = async () => ({});
  const module: HandlerModule = 'lib/operations/handlers-transaction.ts';

  it('compiles only the right shapes', () => {
    // @ts-expect-error a misspelled id is not an OperationId
    const misspelled: OperationId = 'DropTabel';
    // @ts-expect-error a handler map must hold every operation its module's rows name
    const missing: HandlersOf<typeof module, unknown> = { DescribeTransaction: h };
    // @ts-expect-error and no operation whose row names another module
    const misfiled: HandlersOf<typeof module, unknown> = { DescribeTransaction: h, AlterTransaction: h, DropTable: h };
    // @ts-expect-error a reason only for an operation without a handler
    const reasons: Record<UnsupportedOperationId, string> = { ...UNSUPPORTED_REASONS, DropTable: 'no' };
    // @ts-expect-error a row may only name a handler module that exists
    const unknownModule: HandlerModule = 'lib/operations/handlers-query.ts';
    const fine: HandlersOf<typeof module, unknown> = { DescribeTransaction: h, AlterTransaction: h };
    expect([misspelled, missing, misfiled, reasons, unknownModule, fine]).toHaveLength(6);
  });
});
