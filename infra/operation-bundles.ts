import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Metafile } from 'esbuild';
import type { Bundle } from '../lib/contract/operation-columns.js';
import type { OperationDef } from '../lib/contract/operations.js';
import { REPO_ROOT, assetOptions, externalModules, installedModules, writeAsset } from './bundling.js';
import { handlerModuleOf, perOperationDefs } from './operation-entries.js';

/**
 * Builds per-operation mode's code (`rask:functionMode=per-operation`): one asset per bundle,
 * from the entries infra/operation-entries.ts names. Build time only (esbuild): the constructs
 * take the result through infra/asset-source.ts.
 */

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
