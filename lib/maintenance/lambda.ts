/**
 * The handler every scheduled maintenance function shares (functions/maintenance-*.ts): one
 * slice of a pass per invocation, continued by the next.
 *
 * - The pass gets a deadline `reserveMs` before the function's timeout and returns a cursor
 *   when it stops there; the cursor is kept in the registry at `reports/<pass>/cursor.json` and
 *   handed to the next invocation (EventBridge starts one per period), so a pass larger than
 *   15 minutes runs across invocations.
 * - A run that found or did something writes its report to `reports/<pass>/<startedAt>-<id>.json`;
 *   an idle run writes none (an idle estate records no runs) and only logs its summary.
 * - An incomplete run is loud: the handler throws after saving what it has, which counts as a
 *   function error (alarm) and sends the event to the failure destination.
 */
import { randomUUID } from 'node:crypto';
import type { CatalogServices } from '../catalog/services.js';
import { announce } from './announce.js';
import type { MaintenancePass, PassName, PassOptions, PassReport } from './pass.js';

export interface InvocationContext {
  readonly awsRequestId: string;
  getRemainingTimeInMillis(): number;
}

export interface MaintenanceHandlerOptions {
  readonly name: PassName;
  readonly pass: MaintenancePass;
  readonly services: () => Promise<CatalogServices>;
  /** Stop starting work this long before the timeout. */
  readonly reserveMs: number;
  /** Fixed options (repair, delete) from the function's configuration. */
  readonly options?: Omit<PassOptions, 'cursor' | 'deadline'>;
  readonly log?: (entry: Record<string, unknown>) => void;
}

export const reportsPrefix = (name: PassName) => `reports/${name}/`;
export const cursorKey = (name: PassName) => `${reportsPrefix(name)}cursor.json`;

export class IncompletePassError extends Error {
  constructor(report: PassReport) {
    super(`${report.pass} could not cover everything: ${report.problems.slice(0, 5).join('; ')}`);
    this.name = 'IncompletePassError';
  }
}

export function maintenanceHandler(options: MaintenanceHandlerOptions) {
  const log = options.log ?? ((e) => console.log(JSON.stringify({ level: 'info', component: 'maintenance', ...e })));
  return async (_event: unknown, context: InvocationContext) => {
    const services = await options.services();
    const store = services.registry.store;
    const saved = await services.registry.read<{ cursor: string }>(cursorKey(options.name));
    const report = await options.pass(services, {
      ...options.options,
      ...(saved ? { cursor: saved.value.cursor } : {}),
      deadline: Date.now() + Math.max(0, context.getRemainingTimeInMillis() - options.reserveMs),
    });
    if (report.cursor) await store.put(cursorKey(options.name), JSON.stringify({ cursor: report.cursor, savedAt: report.finishedAt }));
    else if (saved) await store.delete(cursorKey(options.name));
    const material = report.items.length > 0 || report.problems.length > 0 || !report.complete;
    let reportKey: string | undefined;
    if (material) {
      reportKey = `${reportsPrefix(options.name)}${report.startedAt}-${randomUUID().slice(0, 8)}.json`;
      await store.putIfAbsent(reportKey, JSON.stringify(report));
      // Its `maintenance.<pass>.completed` event (docs/events.md), as an in-process run announces
      // its own: on AWS into the change log (lib/app/scheduled-pass.ts), which the relay takes to the bus.
      await announce(services, report, reportKey);
    }
    log({ pass: options.name, requestId: context.awsRequestId, complete: report.complete, continues: Boolean(report.cursor), summary: report.summary, report: reportKey });
    if (!report.complete) throw new IncompletePassError(report);
    return { pass: options.name, summary: report.summary, items: report.items.length, continues: Boolean(report.cursor), report: reportKey };
  };
}
