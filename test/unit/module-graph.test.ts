/**
 * The lazy-loading rule, checked on the real module graph: esbuild bundles each Lambda entry
 * point in memory and its metafile lists every module the bundle would contain.
 *
 * The metadata function must reach neither @lancedb/lancedb nor apache-arrow. lib/data loads
 * both through `createRequire` (so that one CJS copy of Arrow is shared with LanceDB), which a
 * bundler cannot follow; so the meta bundle must not reach lib/data or the LanceDB adapter
 * (lib/adapters/lance) at all, and the data bundle
 * must (otherwise the first check would pass vacuously).
 */
import { describe, expect, it } from 'vitest';
import { metafileOf } from '../support/metafile.js';

async function inputsOf(entry: string): Promise<string[]> {
  return Object.keys((await metafileOf([entry])).inputs);
}

const heavy = (inputs: string[]) => inputs.filter((i) => /node_modules\/(@lancedb\/lancedb|apache-arrow)\//.test(i));
const dataPlane = (inputs: string[]) => inputs.filter((i) => (i.startsWith('lib/data/') || i.startsWith('lib/adapters/lance/')));

describe('module graph of the Lambda entry points', () => {
  it('functions/api-meta.ts reaches neither @lancedb/lancedb, apache-arrow nor lib/data', async () => {
    const inputs = await inputsOf('functions/api-meta.ts');
    // The handler modules are reached through lib/operations/handlers-meta-lazy.ts's import()s.
    expect(inputs).toContain('lib/operations/handlers-namespace.ts');
    expect(inputs).toContain('lib/operations/handlers-table.ts');
    expect(heavy(inputs)).toEqual([]);
    expect(dataPlane(inputs)).toEqual([]);
  });

  it('functions/api-data.ts reaches the data engine', async () => {
    const inputs = await inputsOf('functions/api-data.ts');
    // Through lib/operations/handlers-all-lazy.ts's import()s.
    expect(inputs).toContain('lib/operations/data/reads.ts');
    expect(inputs).toContain('lib/operations/data/writes.ts');
    expect(inputs).toContain('lib/adapters/lance/engine.ts');
    expect(inputs).toContain('lib/adapters/lance/lancedb.ts');
    expect(inputs).toContain('lib/data/arrow.ts');
  });
});
