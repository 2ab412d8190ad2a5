import type { OperationId, UnsupportedOperationId } from './operations.js';

/**
 * Why each operation without a handler answers code 0; shown to callers and in COVERAGE.md.
 * Keyed by the rows whose handler column is UNSUPPORTED (lib/contract/operations.ts): a row
 * without a handler and without a reason here, or a reason for an operation that has a
 * handler, fails the type check.
 */
export const UNSUPPORTED_REASONS: Readonly<Record<UnsupportedOperationId, string>> = {
  CreateMaterializedView:
    'the pinned LanceDB 0.31.0 has no materialized views (createMaterializedView arrived in later releases)',
  RefreshMaterializedView:
    'the pinned LanceDB 0.31.0 has no materialized views (refreshMaterializedView arrived in later releases)',
  BatchCreateTableVersions:
    'an all-or-nothing commit across tables cannot be made visible atomically with per-object conditional writes, because Lance clients also read _versions/ directly (docs/batch-commits.md); commit each table with CreateTableVersion',
  BatchCommitTables:
    'an all-or-nothing commit across tables cannot be made visible atomically with per-object conditional writes, because Lance clients also read _versions/ directly (docs/batch-commits.md); commit each table with CreateTableVersion',
};

/** The reason `operationId` answers code 0, or undefined for an operation with a handler. */
export const unsupportedReason = (operationId: OperationId): string | undefined =>
  (UNSUPPORTED_REASONS as Readonly<Partial<Record<OperationId, string>>>)[operationId];
