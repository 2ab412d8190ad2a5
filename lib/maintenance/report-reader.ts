import { InvalidInputError } from '../errors.js';
import { forEachLimited } from '../concurrency.js';
import type { CatalogServices } from '../catalog/services.js';
import type { PassName } from './pass.js';
import { REPORTS_PREFIX } from './reports.js';

export const REPORT_PASSES: readonly PassName[] = ['sweep', 'index', 'reconcile', 'orphans'];
export const DEFAULT_REPORT_LIMIT = 20;
export const MAX_REPORT_LIMIT = 100;
/** Stored reports read per request at most, newest first: what bounds a request on a busy estate. */
export const MAX_REPORTS_READ = 200;

/** One run as a project sees it: only that project's items, and totals over those items. */
export interface ReportView {
  readonly pass: PassName;
  readonly report: string;
  readonly started_at: string;
  readonly finished_at?: string;
  readonly complete: boolean;
  readonly items: readonly Record<string, unknown>[];
  readonly totals: { readonly fragments_reclaimed: number; readonly versions_removed: number; readonly bytes_removed: number; readonly tables: number };
}

/**
 * `GET /v1/maintenance/reports` (docs/maintenance.md, "Reading reports"): the newest stored
 * reports of a pass (or of every pass), cut down to the addressed project's items and, with
 * `table`, that table's. A run stores one report for the whole estate, so the rest of it —
 * other projects' items, the estate-wide summary and problems, which name other tenants'
 * objects — never leaves this function; a run with none of the project's items is not shown.
 */
export async function recentReports(
  services: CatalogServices,
  input: { pass?: string; table?: readonly string[]; limit?: number },
): Promise<{ reports: ReportView[] }> {
  // The caller's view, decided per item's table as the change feed decides per event (the
  // guard's `mayRead`; absent for a platform administrator or without authorization).
  const visible = services.mayRead;
  const passes = input.pass === undefined ? REPORT_PASSES : [passName(input.pass)];
  const limit = input.limit ?? DEFAULT_REPORT_LIMIT;
  if (limit < 1 || limit > MAX_REPORT_LIMIT) throw new InvalidInputError(`limit must be between 1 and ${MAX_REPORT_LIMIT}`);
  const keys = (await Promise.all(passes.map((p) => newestKeys(services, p, MAX_REPORTS_READ)))).flat();
  // Newest first across passes: the file name starts with the run's start time.
  keys.sort((a, b) => (baseName(b) < baseName(a) ? -1 : baseName(b) > baseName(a) ? 1 : 0));
  const read = keys.slice(0, MAX_REPORTS_READ);
  const views: (ReportView | undefined)[] = new Array(read.length);
  await forEachLimited(read.map((key, i) => ({ key, i })), 8, async ({ key, i }) => {
    const stored = await services.registry.store.get(key);
    if (!stored) return;
    const report = JSON.parse(stored.body.toString('utf8')) as StoredReport;
    const ours = (report.items ?? []).filter(
      (item) => item.project === services.project && (input.table === undefined || JSON.stringify(item.table) === JSON.stringify(input.table)),
    );
    const seen = visible ? await Promise.all(ours.map((item) => (Array.isArray(item.table) ? visible('table', item.table as string[]) : false))) : undefined;
    views[i] = viewOf(key, report, seen ? ours.filter((_, n) => seen[n]) : ours);
  });
  return { reports: views.filter((v) => v !== undefined).slice(0, limit) };
}

interface StoredReport {
  readonly pass: PassName;
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly complete?: boolean;
  readonly items?: readonly Record<string, unknown>[];
}

function passName(value: string): PassName {
  if (!(REPORT_PASSES as readonly string[]).includes(value)) throw new InvalidInputError(`pass must be one of ${REPORT_PASSES.join(', ')}`);
  return value as PassName;
}

const baseName = (key: string) => key.slice(key.lastIndexOf('/') + 1);

/** The newest `max` report keys of one pass: days newest first, then each day's keys newest first. */
async function newestKeys(services: CatalogServices, pass: PassName, max: number): Promise<string[]> {
  const store = services.registry.store;
  const days = (await store.list({ prefix: `${REPORTS_PREFIX}${pass}/`, delimiter: '/' })).commonPrefixes;
  const out: string[] = [];
  for (const day of [...days].reverse()) {
    const listed = await store.list({ prefix: day });
    const names = listed.objects.map((o) => o.key).filter((k) => k.endsWith('.json'));
    for (const key of names.reverse()) {
      out.push(key);
      if (out.length >= max) return out;
    }
  }
  return out;
}

function viewOf(key: string, stored: StoredReport, items: readonly Record<string, unknown>[]): ReportView | undefined {
  if (items.length === 0) return undefined;
  const sum = (field: string) => items.reduce((n, item) => n + (typeof item[field] === 'number' ? (item[field] as number) : 0), 0);
  return {
    pass: stored.pass,
    report: baseName(key).replace(/\.json$/, ''),
    started_at: stored.startedAt,
    ...(stored.finishedAt ? { finished_at: stored.finishedAt } : {}),
    complete: stored.complete !== false,
    items,
    totals: {
      fragments_reclaimed: Math.max(0, sum('fragments_before') - sum('fragments_after')),
      versions_removed: sum('versions_removed'),
      bytes_removed: sum('bytes_removed'),
      tables: items.length,
    },
  };
}
