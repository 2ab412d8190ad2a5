import { TableVersionNotFoundError, UnsupportedError } from '../../errors.js';
import { readProtectionRecord } from '../protection.js';
import type { Identity } from '../../contract/request.js';
import type { CatalogServices } from '../services.js';
import type { AccessMode } from '../../ports/credential-vendor.js';
import type { DatasetDetails } from '../../ports/dataset-inspector.js';
import { vendTableAccess } from './declare.js';
import { locationUri } from '../dataset/location.js';
import { hasData, resolveTable } from '../protocols/lookup.js';
import { findManifest } from '../dataset/manifests.js';
import { effectiveMetadata } from './schema-metadata.js';

export interface DescribeInput {
  readonly id: readonly string[];
  readonly withTableUri?: boolean;
  readonly loadDetailedMetadata?: boolean;
  readonly checkDeclared?: boolean;
  readonly vendCredentials?: boolean;
  /**
   * What the caller will do with vended credentials: `read` unless it says it is about to write
   * (the `x-rask-access: readwrite` header), so a reader never holds keys that can delete.
   */
  readonly access?: AccessMode;
  readonly version?: number;
  readonly tag?: string;
  readonly branch?: string;
  readonly identity: Identity;
}

/**
 * Answers from the registry without opening the dataset under the default flags (what every
 * client open sends); only `load_detailed_metadata` opens it, through the inspector port.
 * `managed_versioning` comes from the record, so it is the same for the table's whole life.
 */
export async function describeTable(services: CatalogServices, input: DescribeInput): Promise<Record<string, unknown>> {
  const table = await resolveTable(services, input.id);
  const { record, warehouse } = table;
  const protection: Promise<boolean> =
    record.mayBeProtected === false
      ? Promise.resolve(false)
      : readProtectionRecord(services, 'table', record.id).then((p) => p?.uid === record.uid);
  // Settled even when a later step throws first, so it never becomes an unhandled rejection.
  protection.catch(() => undefined);
  const out: Record<string, unknown> = {
    location: table.location,
    properties: { ...record.properties },
    managed_versioning: record.managedVersioning,
  };
  if (input.withTableUri) out.table_uri = locationUri(warehouse.storage, record.path);
  if (input.checkDeclared || input.loadDetailedMetadata) {
    out.is_only_declared = !(await hasData(table.store, record.path));
  }
  if (input.version !== undefined && !(await findManifest(table.store, record.path, input.version, input.branch))) {
    throw new TableVersionNotFoundError(`table ${JSON.stringify(input.id)} has no version ${input.version}`);
  }
  const vended = await vendTableAccess(services, input, warehouse, record.path, input.access ?? 'read');
  Object.assign(out, vended);
  const storageOptions = vended.storage_options;
  let details: DatasetDetails | undefined;
  if (input.loadDetailedMetadata && out.is_only_declared === false) {
    if (!services.inspector) {
      throw new UnsupportedError('load_detailed_metadata needs the data plane, which this endpoint does not load');
    }
    details = await services.inspector.inspect(table.location, {
      version: input.version,
      tag: input.tag,
      branch: input.branch,
      storageOptions,
    });
    Object.assign(out, {
      table: record.id[record.id.length - 1],
      namespace: record.id.slice(0, -1),
      version: details.version,
      schema: details.schema,
    });
  }
  // Our addition (docs/lifecycle.md): a top-level boolean the spec's schema admits (it does not
  // close DescribeTableResponse) and clients ignore. Free for a table never protected (its record
  // says so); one registry read, beside the rest, for one that is or was.
  out.protected = await protection;
  if (input.loadDetailedMetadata) {
    // Schema metadata set through UpdateTableSchemaMetadata lives in the record as an overlay
    // (schema-metadata.ts); it applies to a declared table too, which has no dataset yet.
    const metadata = effectiveMetadata(details?.metadata, record.schemaMetadata);
    if (Object.keys(metadata).length > 0) out.metadata = metadata;
    if (details && record.schemaMetadata) out.schema = withSchemaMetadata(details.schema, metadata);
  }
  return out;
}

/** The JSON Arrow schema with its metadata replaced by the effective map. */
function withSchemaMetadata(schema: unknown, metadata: Record<string, string>): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const { metadata: _own, ...rest } = schema as Record<string, unknown>;
  return Object.keys(metadata).length > 0 ? { ...rest, metadata } : rest;
}
