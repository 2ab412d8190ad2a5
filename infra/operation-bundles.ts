import path from 'node:path';
import { ALL_OPERATIONS, HANDLER_EXPORTS, type OperationDef } from '../lib/contract/operations.js';
import type { Metafile } from 'esbuild';
import { REPO_ROOT, assetOptions, externalModules, installedModules, writeAsset } from './bundling.js';

/**
 * Per-operation bundles (`rask:functionMode=per-operation`): for each operation, a generated
 * entry that imports only the handler module holding it and passes only its handler, so esbuild
 * leaves every other handler module — and what only they reach — out of the bundle.
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

/** The TypeScript source of `operation`'s entry, resolved from functions/. */
export function operationEntrySource(operation: OperationDef): string {
  const module = handlerModuleOf(operation.operationId);
  if (!module) throw new Error(`no handler for ${operation.operationId}`);
  const from = (file: string) => JSON.stringify(path.join(REPO_ROOT, file));
  const [factory, factoryFile] =
    operation.bundle === 'data' ? ['dataOperationHandler', 'functions/api-operation-data.ts'] : ['metaOperationHandler', 'functions/api-operation-meta.ts'];
  const id = JSON.stringify(operation.operationId);
  return [
    `import { ${factory} } from ${from(factoryFile)};`,
    `import { ${module.exportName} as handlers } from ${from(module.file)};`,
    `export const handler = ${factory}(${id}, { [${id}]: handlers[${id}] });`,
    '',
  ].join('\n');
}

/** Builds `operation`'s Lambda asset into `outdir`: its generated entry with the stack's settings (infra/bundling.ts). */
export function bundleOperation(operation: OperationDef, outdir: string): { metafile: Metafile } {
  const options = {
    ...assetOptions(externalModules(operation.bundle), outdir),
    stdin: {
      contents: operationEntrySource(operation),
      resolveDir: path.join(REPO_ROOT, 'functions'),
      sourcefile: `functions/operation-${operation.operationId}.ts`,
      loader: 'ts' as const,
    },
  };
  return writeAsset(options, installedModules(operation.bundle), outdir);
}
