import { ALL_OPERATIONS, HANDLER_EXPORTS, type OperationDef } from '../lib/contract/operations.js';

/**
 * Per-operation mode (`rask:functionMode=per-operation`): which operations get a function of their
 * own, the module holding each one's handler and the handler name its function is deployed with.
 * The entries built from these (infra/operation-bundles.ts) import only that module and pass
 * only that handler. No build tool is imported here: the constructs read it at synth.
 *
 * Where each handler lives is the operation table's handler column (a path, never an import:
 * the data handlers would load LanceDB into the synth). test/unit/operation-table.test.ts checks
 * the column against the maps as imported, so a handler moved to another module cannot be missed.
 */
export interface HandlerModule {
  /** Repository-relative path. */
  readonly file: string;
  /** The exported handler map. */
  readonly exportName: string;
}

/** The modules whose maps make up `metaHandlers` and `dataHandlers` (lib/operations/handlers-{meta,data}.ts). */
export const HANDLER_MODULES: readonly HandlerModule[] = Object.entries(HANDLER_EXPORTS).map(([file, exportName]) => ({ file, exportName }));

const BY_ID = new Map(ALL_OPERATIONS.map((op) => [op.operationId as string, op]));

/** The handler module of `operationId`, or undefined for an operation without a handler (it answers Unsupported). */
export function handlerModuleOf(operationId: string): HandlerModule | undefined {
  const file = BY_ID.get(operationId)?.handler;
  return file === undefined ? undefined : { file, exportName: HANDLER_EXPORTS[file] };
}

/** The operations deployed as functions of their own: every operation of the table that has a handler. */
export function perOperationDefs(): OperationDef[] {
  return ALL_OPERATIONS.filter((op) => handlerModuleOf(op.operationId));
}

/** The handler of `operation`'s function in its bundle's shared asset (`bundleOperations`). */
export function operationHandler(operation: OperationDef): string {
  return `${operation.operationId}.handler`;
}
