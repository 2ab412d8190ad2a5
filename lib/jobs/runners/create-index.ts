/**
 * `create_index`: a CreateTableIndex request too large to build inside an HTTP request
 * (docs/index-builds.md), built by the worker with exactly the call the request would have made:
 * the job records the request's index fields (lib/catalog/data/indices.ts), decoded again here
 * as the handler decodes a body.
 */
import { CatalogError, ErrorCode } from '../../errors.js';
import { readIndexRequest } from '../../data/index-request.js';
import { CREATE_INDEX } from '../../catalog/data/indices.js';
import { dataEngineOf } from '../../catalog/services.js';
import { recordDefinition } from '../../catalog/data/index-definitions.js';
import type { JobRunner } from '../runner.js';
import { jobTable } from './table.js';

export { CREATE_INDEX };

export const createIndexRunner: JobRunner = async (job, { services, signal }): Promise<Record<string, string>> => {
  const table = await jobTable(services, job);
  const request = readIndexRequest(job.params);
  const name = String(job.params.name);
  signal.throwIfAborted();
  try {
    await dataEngineOf(services).createIndex(table.location, request);
  } catch (err) {
    // The build commits atomically at its end. An earlier attempt whose worker died after that
    // commit but before it could report leaves the index behind: finding it on a retry is success.
    if (job.attempts > 1 && err instanceof CatalogError && err.code === ErrorCode.TableIndexAlreadyExists) {
      const listed = await dataEngineOf(services).listIndices(table.location, request.branch === undefined ? {} : { branch: request.branch });
      const built = listed.indexes.find((i) => i.index_name === name && i.columns.includes(request.column));
      if (built) {
        await recordDefinition(services, table.record, request);
        return { index_name: name, note: 'built by an earlier attempt that stopped before reporting it' };
      }
    }
    throw err;
  }
  // The definition the index builder rebuilds it from after a write drops it (index-definitions.ts).
  await recordDefinition(services, table.record, request);
  return { index_name: name };
};
