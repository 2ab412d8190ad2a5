/** Why each operation without a handler answers code 0; shown to callers and in COVERAGE.md. */
export const UNSUPPORTED_REASONS: Readonly<Record<string, string>> = {
  CreateMaterializedView:
    'the pinned LanceDB 0.31.0 has no materialized views (createMaterializedView arrived in later releases)',
  RefreshMaterializedView:
    'the pinned LanceDB 0.31.0 has no materialized views (refreshMaterializedView arrived in later releases)',
  BatchCreateTableVersions:
    'an all-or-nothing commit across tables cannot be made visible atomically with per-object conditional writes, because Lance clients also read _versions/ directly (docs/batch-commits.md); commit each table with CreateTableVersion',
  BatchCommitTables:
    'an all-or-nothing commit across tables cannot be made visible atomically with per-object conditional writes, because Lance clients also read _versions/ directly (docs/batch-commits.md); commit each table with CreateTableVersion',
};
