/**
 * A policy's desired index as an index request (lib/data/index-request.ts), for the passes that
 * build or rebuild it. Apart from lib/maintenance/policy.ts, which the metadata, sweep and
 * index-build bundles carry without the data plane (test/unit/module-graph.test.ts,
 * test/infra/bundle.test.ts).
 */
import { type IndexRequest, readIndexRequest } from '../data/index-request.js';
import type { DesiredIndex } from './policy.js';

/** A desired index as the fields of a CreateTableIndex request (what a queued build records). */
export function desiredFields(desired: DesiredIndex): Record<string, unknown> {
  return { ...(desired.params ?? {}), column: desired.column, index_type: desired.type, name: desired.name };
}

/** A desired index as an index request, decoded as the handler decodes a body (lib/data/index-request.ts). */
export function desiredRequest(desired: DesiredIndex): IndexRequest {
  return readIndexRequest(desiredFields(desired));
}
