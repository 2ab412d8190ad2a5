/**
 * `npm start` runs the maintenance passes on timers, one per pass (RASK_SWEEP_INTERVAL_MS,
 * RASK_INDEX_INTERVAL_MS, RASK_RECONCILE_INTERVAL_MS, RASK_ORPHANS_INTERVAL_MS; 0 disables a
 * pass). Each pass is re-armed only after its previous run ends, so a slow sweep never overlaps
 * itself; a failed run is logged loudly and the next one still comes. When the server's job loop
 * runs, the sweep and the index build queue one job per table for it (lib/maintenance/fan-out.ts). On AWS the same passes run
 * from their own Lambdas on EventBridge schedules.
 */
import type { CatalogServices } from '../catalog/services.js';
import type { PassName, PassReport } from './pass.js';
import { loadPass, PASS_NAMES } from './passes.js';

export type PassIntervals = Readonly<Record<PassName, number>>;

export type MaintenanceLog = (entry: Readonly<Record<string, unknown>>) => void;

const consoleLog: MaintenanceLog = (entry) => {
  const line = JSON.stringify(entry);
  if (entry.level === 'error' || entry.level === 'warn') console.error(line);
  else console.log(line);
};

export interface MaintenanceTimers {
  /** Runs one pass now (after any run of it in progress); undefined when the pass is not available. */
  runOnce(name: PassName): Promise<PassReport | undefined>;
  stop(): Promise<void>;
}

/** Longest a timer-driven run keeps starting new tables, so stop() is never kept waiting long. */
const RUN_BUDGET_MS = 5 * 60_000;

export interface TimerSettings {
  /** Sweep and index build queue per-table jobs for the job loop instead of working in-process. */
  readonly fanOut?: boolean;
}

export function startMaintenanceTimers(
  services: CatalogServices,
  intervals: PassIntervals,
  log: MaintenanceLog = consoleLog,
  settings: TimerSettings = {},
): MaintenanceTimers {
  let stopped = false;
  const timers = new Map<PassName, NodeJS.Timeout>();
  const running = new Map<PassName, Promise<unknown>>();
  const cursors = new Map<PassName, string | undefined>();

  const run = (name: PassName): Promise<PassReport | undefined> => {
    const previous = running.get(name) ?? Promise.resolve();
    const next = previous.then(async () => {
      const pass = await loadPass(name);
      if (!pass) {
        log({ level: 'warn', message: `maintenance pass ${name} is not available in this build` });
        return undefined;
      }
      const report = await pass(services, {
        cursor: cursors.get(name),
        deadline: Date.now() + RUN_BUDGET_MS,
        ...(settings.fanOut && (name === 'sweep' || name === 'index') ? { fanOut: true } : {}),
      });
      // Continue where the budget stopped the run; a finished run starts over next time.
      cursors.set(name, report.cursor);
      const loud = !report.complete || report.problems.length > 0;
      log({ level: loud ? 'error' : 'info', message: `maintenance ${name} ${loud ? 'found problems' : 'done'}`, pass: name, summary: report.summary, problems: report.problems, report: report.reportKey });
      return report;
    });
    running.set(name, next.catch(() => undefined));
    return next;
  };

  const arm = (name: PassName, ms: number) => {
    if (stopped || ms <= 0) return;
    const timer = setTimeout(() => {
      run(name)
        .catch((err: unknown) => log({ level: 'error', message: `maintenance ${name} failed`, pass: name, error: String(err) }))
        .finally(() => arm(name, ms));
    }, ms);
    // The timers alone never keep the process alive.
    timer.unref();
    timers.set(name, timer);
  };
  for (const name of PASS_NAMES) arm(name, intervals[name]);

  return {
    runOnce: run,
    async stop() {
      stopped = true;
      for (const t of timers.values()) clearTimeout(t);
      await Promise.all([...running.values()]);
    },
  };
}
