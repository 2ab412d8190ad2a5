import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ALL_OPERATIONS } from '../lib/contract/control-operations.js';
import type { OperationDef } from '../lib/contract/operations.js';
import type { Metafile } from 'esbuild';
import { REPO_ROOT, assetOptions, externalModules, installedModules, writeAsset } from './bundling.js';

/**
 * Per-operation bundles (`rask:functionMode=per-operation`): for each operation, a generated
 * entry that imports only the handler module holding it and passes only its handler, so esbuild
 * leaves every other handler module — and what only they reach — out of the bundle.
 *
 * Where each handler lives is read from the handler modules' source (their maps list one
 * operation per line) rather than by importing them: the data handlers would load LanceDB into
 * the synth. test/infra/operation-functions.test.ts checks this index against the maps as
 * imported, so a handler moved to another module cannot be missed.
 */
export interface HandlerModule {
  /** Repository-relative path. */
  readonly file: string;
  /** The exported handler map. */
  readonly exportName: string;
}

/** The modules whose maps make up `metaHandlers` and `dataHandlers` (lib/operations/handlers-{meta,data}.ts). */
export const HANDLER_MODULES: readonly HandlerModule[] = [
  { file: 'lib/operations/handlers-namespace.ts', exportName: 'namespaceHandlers' },
  { file: 'lib/operations/handlers-table.ts', exportName: 'tableHandlers' },
  { file: 'lib/operations/handlers-version.ts', exportName: 'versionHandlers' },
  { file: 'lib/operations/handlers-transaction.ts', exportName: 'transactionHandlers' },
  { file: 'lib/operations/handlers-maintenance.ts', exportName: 'maintenanceHandlers' },
  { file: 'lib/operations/handlers-control.ts', exportName: 'controlHandlers' },
  { file: 'lib/operations/handlers-lifecycle.ts', exportName: 'lifecycleHandlers' },
  { file: 'lib/operations/data/writes.ts', exportName: 'writeHandlers' },
  { file: 'lib/operations/data/reads.ts', exportName: 'readHandlers' },
  { file: 'lib/operations/data/indices.ts', exportName: 'indexHandlers' },
  { file: 'lib/operations/data/refs.ts', exportName: 'refHandlers' },
  { file: 'lib/operations/data/schema.ts', exportName: 'schemaHandlers' },
  { file: 'lib/operations/data/backfill.ts', exportName: 'backfillHandlers' },
];

/** The operation ids a handler module's map names (its keys at the map's first indentation level). */
export function operationsIn(module: HandlerModule): string[] {
  const source = readFileSync(path.join(REPO_ROOT, module.file), 'utf8');
  const start = source.indexOf(`export const ${module.exportName}`);
  if (start < 0) throw new Error(`${module.file} does not export ${module.exportName}`);
  const end = source.indexOf('\n};', start);
  const body = source.slice(start, end < 0 ? undefined : end);
  return [...body.matchAll(/^ {2}(?:async )?([A-Z][A-Za-z]+)\s*[:(,]/gm)].map((m) => m[1]);
}

let index: Map<string, HandlerModule> | undefined;

/** The handler module of `operationId`, or undefined for an operation without a handler (it answers Unsupported). */
export function handlerModuleOf(operationId: string): HandlerModule | undefined {
  if (!index) {
    index = new Map();
    for (const module of HANDLER_MODULES) for (const op of operationsIn(module)) index.set(op, module);
  }
  return index.get(operationId);
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
