/**
 * Schema evolution (add, alter and drop columns; field metadata) through the engine, each body
 * decoded by schema-input.ts; table schema metadata through the registry
 * (lib/catalog/tables/schema-metadata.ts).
 */
import type { CatalogServices } from '../../catalog/services.js';
import { alterColumns, dropColumns } from '../../catalog/data/column-changes.js';
import { DESCRIPTION_KEY, MAX_DESCRIPTION_CHARS, type MetadataUpdate, updateSchemaMetadata } from '../../catalog/tables/schema-metadata.js';
import { InvalidInputError, UnsupportedError } from '../../errors.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { engine, queryString, table } from './context.js';
import { addColumnsInput, alterColumnsInput, dropColumnsInput, fieldMetadataInput } from './schema-input.js';

export const schemaHandlers: HandlersOf<'lib/operations/data/schema.ts', CatalogServices> = {
  AlterTableAddColumns: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).addColumns(t.location, addColumnsInput(req.body));
  },
  AlterTableAlterColumns: async (req, svc) => {
    const t = await table(req, svc);
    return alterColumns(svc, t, alterColumnsInput(req.body));
  },
  AlterTableDropColumns: async (req, svc) => {
    const t = await table(req, svc);
    return dropColumns(svc, t, dropColumnsInput(req.body));
  },
  UpdateFieldMetadata: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).updateFieldMetadata(t.location, fieldMetadataInput(req.body));
  },

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
function metadataMap(req: OperationRequest): Readonly<Record<string, unknown>> {
  const b = req.body;
  if (typeof b.metadata === 'object' && b.metadata !== null && !Array.isArray(b.metadata)) {
    return b.metadata as Record<string, unknown>;
  }
  return b;
}

/** A bare JSON map of string or null values (docs/rules.md rule 10: `null` deletes the key). */
export function parseMetadataUpdate(map: Readonly<Record<string, unknown>>): MetadataUpdate {
  const update: MetadataUpdate = {};
  for (const [key, value] of Object.entries(map)) {
    if (key === '') throw new InvalidInputError('schema metadata keys must not be empty');
    if (value !== null && typeof value !== 'string') {
      throw new InvalidInputError(`schema metadata value for ${JSON.stringify(key)} must be a string or null`);
    }
    if (key === DESCRIPTION_KEY && value !== null && value.length > MAX_DESCRIPTION_CHARS) {
      throw new InvalidInputError(`"${DESCRIPTION_KEY}" is the table's human description; keep it under ${MAX_DESCRIPTION_CHARS} characters`);
    }
    update[key] = value;
  }
  return update;
}
