import type { DatasetInspector } from '../../ports/dataset-inspector.js';
import type { DataEngine } from '../../ports/data-engine.js';

/**
 * The DatasetInspector port over the data engine: DescribeTable with `load_detailed_metadata`
 * opens the dataset at the requested version, tag or branch and reports its version, JSON Arrow
 * schema and schema metadata. The engine reads with the process's own storage access, so the
 * vended `storageOptions` (meant for the caller) are not used.
 */
export function engineInspector(engine: DataEngine): DatasetInspector {
  return {
    async inspect(location, options) {
      const selection: { version?: number; tag?: string; branch?: string } = {};
      if (options.version !== undefined) selection.version = options.version;
      if (options.tag !== undefined) selection.tag = options.tag;
      if (options.branch !== undefined) selection.branch = options.branch;
      return engine.describe(location, selection);
    },
  };
}
