/**
 * AlterTableBackfillColumns' behaviour: checks the computed column and its filter against the
 * table (4, 12, 13), then queues a `backfill` job (its runner: lib/jobs/runners/backfill.ts)
 * whose summary says what will be computed; DescribeTransaction follows it (docs/jobs.md).
 */
import { defaultBackfillFilter } from '../../data/backfill-filter.js';
import { backfillBytes, newestManifest } from '../dataset/rewrite-estimates.js';
import type { BackfillRequest } from '../../ports/data-engine.js';
import { jobContext } from '../../queue/context.js';
import { enqueue } from '../../queue/jobs.js';
import { type CatalogServices, dataEngineOf } from '../services.js';
import type { ResolvedTable } from '../protocols/lookup.js';
import { trackedMerge } from './column-fill.js';
import { serializedWrite } from './write-queue.js';
import { bytesWritten, type IndexEffect, indexEffects, readCoverage } from './write-effects.js';

export const BACKFILL = 'backfill';

export async function queueBackfill(svc: CatalogServices, t: ResolvedTable, request: BackfillRequest): Promise<{ job_id: string }> {
  const binding = await dataEngineOf(svc).checkBackfill(t.location, request);
  const manifest = await newestManifest(t.store, t.record.path, request.branch);
  const bytes = manifest && backfillBytes(manifest, binding.column);
  const job = await enqueue(jobContext(svc), {
    type: BACKFILL,
    table: { id: t.record.id, uid: t.record.uid },
    params: { ...request, column: binding.column },
    // Above the byte budget the fill starts on the task tier (lib/queue/tiers.ts, docs/jobs.md "Routing").
    ...(bytes === undefined ? {} : { estimate: { bytes } }),
    summary: {
      column: binding.column,
      expression: binding.expression,
      where: request.where ?? defaultBackfillFilter(binding.column),
      ...(request.branch ? { branch: request.branch } : {}),
    },
  });
  return { job_id: job.id };
}

/** Rows per slice at most: one fragment's rows, bounded so a slice's values fit a worker's memory. */
export const BACKFILL_SLICE_ROWS = 50_000;

export interface BackfillOutcome {
  readonly updated_rows: number;
  readonly version?: number;
  readonly expression: string;
  readonly where: string;
  /** `column-only` (slices merged on `key`) or `full-rows` (one UPDATE: the table has no key). */
  readonly path: 'column-only' | 'full-rows';
  readonly key?: string;
  readonly slices: number;
  readonly bytes_written?: number;
  readonly index_effects: readonly IndexEffect[];
}

/**
 * Runs a backfill (the `backfill` job's runner: lib/jobs/runners/backfill.ts): slice by slice
 * through the column-only fill (column-fill.ts) when the table has a key that identifies every
 * row, so only the computed column (and the key) is written, one fragment at a time, each
 * slice its own commit. A backfill stopped halfway has committed the slices it did: with the
 * default `where` (`<column> IS NULL`) a retry reads only what is left; with a `where` of the
 * caller's, it computes every matching row again. Without such a key: one UPDATE (whole rows),
 * whose index effects are reported. `onSlice` is for tests (and progress): called after each commit.
 */
export async function runBackfill(
  svc: CatalogServices,
  t: ResolvedTable,
  request: BackfillRequest,
  options: { signal?: AbortSignal; onSlice?: (done: number) => void | Promise<void>; maxRows?: number } = {},
): Promise<BackfillOutcome> {
  const engine = dataEngineOf(svc);
  const binding = await engine.checkBackfill(t.location, request);
  const key = await engine.backfillKey(t.location, { column: binding.column, ...(request.branch ? { branch: request.branch } : {}) });
  if (!key) return fullRowBackfill(svc, t, request);
  let after: string | undefined;
  let updated = 0;
  let bytes = 0;
  let slices = 0;
  let version: number | undefined;
  let where = request.where ?? defaultBackfillFilter(binding.column);
  const effects: IndexEffect[] = [];
  for (;;) {
    options.signal?.throwIfAborted();
    const slice = await engine.backfillSlice(t.location, { ...request, column: binding.column, key, maxRows: options.maxRows ?? BACKFILL_SLICE_ROWS, ...(after ? { after } : {}) });
    where = slice.where;
    if (!slice.ipc || slice.rows === 0) break;
    const ipc = slice.ipc;
    const merged = await serializedWrite(t.location, () =>
      trackedMerge(svc, t, ipc, {
        on: [key],
        whenMatchedUpdateAll: true,
        whenNotMatchedInsertAll: false,
        whenNotMatchedBySourceDelete: false,
        ...(request.branch ? { branch: request.branch } : {}),
      }),
    );
    updated += merged.num_updated_rows;
    bytes += merged.bytes_written ?? 0;
    version = merged.version;
    effects.push(...(merged.index_effects ?? []));
    slices++;
    after = slice.last;
    await options.onSlice?.(slices);
  }
  return { updated_rows: updated, version, expression: binding.expression, where, path: 'column-only', key, slices, bytes_written: bytes, index_effects: effects };
}

async function fullRowBackfill(svc: CatalogServices, t: ResolvedTable, request: BackfillRequest): Promise<BackfillOutcome> {
  const engine = dataEngineOf(svc);
  const before = await readCoverage(engine, t.location, request.branch);
  const r = await serializedWrite(t.location, () => engine.backfill(t.location, request));
  const [after, bytes] = await Promise.all([readCoverage(engine, t.location, request.branch), bytesWritten(t, r.version, request.branch)]);
  return {
    updated_rows: r.updated_rows,
    version: r.version,
    expression: r.expression,
    where: r.where,
    path: 'full-rows',
    slices: 1,
    ...(bytes !== undefined ? { bytes_written: bytes } : {}),
    index_effects: indexEffects(before, after),
  };
}
