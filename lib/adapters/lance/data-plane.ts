import type { DataEngine } from '../../ports/data-engine.js';
import type { DatasetInspector } from '../../ports/dataset-inspector.js';
import { engineInspector } from './inspector.js';
import { sharedEngine } from './shared-engine.js';

/**
 * What the bundles that carry LanceDB (the data and jobs functions) give their composition
 * (lib/app/build.ts, `DataPlane`): the process's one engine, and the inspector over it.
 */
export function lanceDataPlane(): { readonly engine: DataEngine; readonly inspector: DatasetInspector } {
  const engine = sharedEngine();
  return { engine, inspector: engineInspector(engine) };
}
