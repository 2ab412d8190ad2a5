import type { CatalogServices } from '../catalog/services.js';
import { cloudEvent } from '../events/cloudevent.js';
import { maintenanceEvent } from '../events/vocabulary.js';
import type { PassReport } from './pass.js';

/**
 * The table versions a run committed itself (its items' `version_before` → `version_after`), so
 * the change relay does not announce them as commits made outside the catalog
 * (lib/maintenance/change-relay.ts reads `details.commits`).
 */
function commitsOf(report: PassReport): { id: string[]; from: number; to: number }[] {
  const out: { id: string[]; from: number; to: number }[] = [];
  for (const item of report.items) {
    const { table, version_before: from, version_after: to } = item as { table?: unknown; version_before?: unknown; version_after?: unknown };
    if (Array.isArray(table) && typeof from === 'number' && typeof to === 'number' && to > from) out.push({ id: table.map(String), from, to });
  }
  return out;
}

/**
 * The change event of a maintenance pass that did material work (docs/events.md): one per run,
 * carrying the run's summary, where its report is, and the table versions it committed. An idle
 * run says nothing.
 */
export async function announce(services: CatalogServices, report: PassReport, reportKey: string): Promise<void> {
  const commits = commitsOf(report);
  await services.events?.publish([
    cloudEvent(maintenanceEvent(report.pass), {
      project: services.project,
      kind: 'maintenance',
      id: [report.pass],
      principal: 'maintenance',
      operation: report.pass,
      request_id: reportKey,
      details: { summary: report.summary, report: reportKey, complete: report.complete, ...(commits.length > 0 ? { commits } : {}) },
    }),
  ]);
}
