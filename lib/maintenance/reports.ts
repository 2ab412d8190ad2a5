/**
 * Maintenance reports, written under the registry store's `reports/` prefix:
 *
 *   reports/<pass>/<YYYY-MM-DD>/<startedAt>-<random>.json
 *
 * A run that did material work writes the whole report (every item); a run that did none
 * writes only its summary and problems, so an idle estate leaves a heartbeat and not a pile of
 * per-table "nothing to do" records. Keys sort by time within a pass, so the newest report of a
 * day is the last of one LIST.
 */
import { randomBytes } from 'node:crypto';
import type { Registry } from '../registry/registry.js';
import type { PassReport } from './pass.js';

export const REPORTS_PREFIX = 'reports/';

export function reportKey(report: Pick<PassReport, 'pass' | 'startedAt'>, suffix = randomBytes(4).toString('hex')): string {
  const day = report.startedAt.slice(0, 10);
  return `${REPORTS_PREFIX}${report.pass}/${day}/${report.startedAt.replace(/:/g, '-')}-${suffix}.json`;
}

/** What is stored for a run: everything when `material`, otherwise the summary only. */
export function storedReport(report: PassReport, material: boolean): Record<string, unknown> {
  if (material) return { ...report, material: true };
  const { items: _items, ...rest } = report;
  return { ...rest, material: false, items_omitted: report.items.length };
}

/** Writes the report; returns its key. A failure to write is the caller's problem to surface. */
export async function writeReport(registry: Registry, report: PassReport, material: boolean): Promise<string> {
  const key = reportKey(report);
  await registry.store.put(key, JSON.stringify(storedReport(report, material), null, 1));
  return key;
}
