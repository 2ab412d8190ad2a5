/**
 * Pass name → the module that implements it, imported lazily (the sweep and the index builder
 * load LanceDB on first use; reconcile and the orphan scan are registry/storage readers). One
 * map for the `rask` CLI and the local timers, so both run the same four passes the same way.
 *
 * Reconcile and the orphan scan are built separately (lib/maintenance/reconcile.ts exporting
 * `reconcile`, lib/maintenance/orphans.ts exporting `orphanScan`); until those modules exist
 * the map answers `undefined` and callers say "not available" instead of failing obscurely.
 */
import type { MaintenancePass, PassName } from './pass.js';

export const PASS_NAMES: readonly PassName[] = ['sweep', 'index', 'reconcile', 'orphans'];

/** Imports an optional module; undefined when it is not there (and only then). */
async function optional(specifier: string, name: string): Promise<MaintenancePass | undefined> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(/* @vite-ignore */ specifier)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || /Cannot find module/.test(String((err as Error).message))) return undefined;
    throw err;
  }
  return typeof mod[name] === 'function' ? (mod[name] as MaintenancePass) : undefined;
}

// Kept in variables so type-checking and bundling do not require the optional modules.
const RECONCILE_MODULE = './reconcile.js';
const ORPHANS_MODULE = './orphans.js';

const LOADERS: Record<PassName, () => Promise<MaintenancePass | undefined>> = {
  sweep: async () => (await import('./sweep.js')).sweep,
  index: async () => (await import('./index-builder.js')).indexBuild,
  reconcile: () => optional(RECONCILE_MODULE, 'reconcile'),
  orphans: () => optional(ORPHANS_MODULE, 'orphanScan'),
};

/** The pass, or undefined when this build does not include it. */
export function loadPass(name: PassName): Promise<MaintenancePass | undefined> {
  return LOADERS[name]();
}

export function isPassName(value: string): value is PassName {
  return (PASS_NAMES as readonly string[]).includes(value);
}
