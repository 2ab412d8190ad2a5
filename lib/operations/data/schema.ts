/**
 * Schema evolution (add, alter and drop columns; field metadata) through the engine, and table
 * schema metadata through the registry (lib/catalog/tables/schema-metadata.ts).
 */
import type { CatalogServices } from '../../catalog/services.js';
import { parseMetadataUpdate, updateSchemaMetadata } from '../../catalog/tables/schema-metadata.js';
import { UnsupportedError } from '../../errors.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { body, engine, queryString, table } from './context.js';

export const schemaHandlers: HandlersOf<'lib/operations/data/schema.ts', CatalogServices> = {
  AlterTableAddColumns: async (req, svc) => engine(svc).addColumns((await table(req, svc)).location, body(req)),
  AlterTableAlterColumns: async (req, svc) => engine(svc).alterColumns((await table(req, svc)).location, body(req)),
  AlterTableDropColumns: async (req, svc) => engine(svc).dropColumns((await table(req, svc)).location, body(req)),
  UpdateFieldMetadata: async (req, svc) => engine(svc).updateFieldMetadata((await table(req, svc)).location, body(req)),

  // Bare map in, the full merged map out (rest-conformance.md §2 #15).
  UpdateTableSchemaMetadata: async (req, svc) => {
    if (queryString(req.query, 'branch')) {
      throw new UnsupportedError('schema metadata is kept per table, not per branch; omit "branch"');
    }
    const update = parseMetadataUpdate(metadataMap(req));
    return updateSchemaMetadata(svc, req.id, update, async (location) => (await engine(svc).describe(location)).metadata);
  },
};

/**
 * The REST binding sends a bare map. The wrapped request model (`{"id": [...], "metadata":
 * {...}}`, what the reference server parses) is accepted too: a bare map's values are strings
 * or null, so an object under `metadata` can only mean the wrapped form.
 */
function metadataMap(req: OperationRequest): Record<string, unknown> {
  const b = req.body;
  if (typeof b.metadata === 'object' && b.metadata !== null && !Array.isArray(b.metadata)) {
    return b.metadata as Record<string, unknown>;
  }
  return b;
}
