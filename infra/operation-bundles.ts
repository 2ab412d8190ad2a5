import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ALL_OPERATIONS, HANDLER_EXPORTS, type OperationDef } from '../lib/contract/operations.js';
import type { Bundle } from '../lib/contract/operation-columns.js';
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

/** The handler of `operation`'s function in its bundle's shared asset (`bundleOperations`). */
export function operationHandler(operation: OperationDef): string {
  return `${operation.operationId}.handler`;
}

/**
 * Builds the one asset every per-operation function of `bundle` deploys: an entry per operation
 * (`<OperationId>.mjs`, handler `operationHandler`), built together with code splitting, so a
 * module two entries use is one chunk under `chunks/` and an entry loads only the modules its own
 * handler reaches. One asset per bundle instead of one per operation: CDK uploads it once, and a
 * packaged construct (docs/deploy.md, "Rask in your own CDK app") carries two asset directories
 * instead of ~100 copies of the same chunks and policy engine.
 */
export function bundleOperations(bundle: Bundle, outdir: string): { metafile: Metafile } {
  const operations = perOperationDefs().filter((op) => op.bundle === bundle);
  // esbuild's synchronous API takes no plugins, so the generated entries are real files.
  const entries = mkdtempSync(path.join(tmpdir(), `rask-operation-entries-${bundle}-`));
  try {
    const entryPoints = operations.map((op) => {
      const file = path.join(entries, `${op.operationId}.ts`);
      writeFileSync(file, operationEntrySource(op));
      return { in: file, out: op.operationId };
    });
    return writeAsset({ ...assetOptions(externalModules(bundle), outdir), entryPoints, entryNames: '[name]' }, installedModules(bundle), outdir);
  } finally {
    rmSync(entries, { recursive: true, force: true });
  }
}
