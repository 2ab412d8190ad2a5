import type { CatalogServices } from '../catalog/services.js';
import { cloudEvent } from '../events/cloudevent.js';
import { maintenanceEvent } from '../events/vocabulary.js';
import type { PassReport } from './pass.js';

/**
 * The change event of a maintenance pass that did material work (docs/events.md): one per run,
 * carrying the run's summary and where its report is. An idle run says nothing.
 */
export async function announce(services: CatalogServices, report: PassReport, reportKey: string): Promise<void> {
  await services.events?.publish([
    cloudEvent(maintenanceEvent(report.pass), {
      project: services.project,
      kind: 'maintenance',
      id: [report.pass],
      principal: 'maintenance',
      operation: report.pass,
      request_id: reportKey,
      details: { summary: report.summary, report: reportKey, complete: report.complete },
    }),
  ]);
}
