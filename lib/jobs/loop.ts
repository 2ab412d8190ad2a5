/**
 * The local server's worker: runs `runJobsOnce` every `intervalMs` in the server's own process.
 * LanceDB's native calls run off the JavaScript thread, so an index build does not stall the
 * API, and the heartbeat timers keep firing while it runs.
 */
import type { CatalogServices } from '../catalog/services.js';
import { consoleWorkerLog, runJobsOnce, type WorkerLog, type WorkerReport } from './worker.js';
import type { JobRunners } from './runner.js';

export interface JobLoop {
  /** One pass now (after any pass in progress): what the timer does, callable on demand. */
  runOnce(): Promise<WorkerReport>;
  /** Stops the timer, aborts the running job (it is given back to the queue), waits for the pass. */
  stop(): Promise<void>;
}

export interface JobLoopOptions {
  /** Milliseconds between passes; 0 starts no timer (passes run only through runOnce). */
  readonly intervalMs: number;
  readonly owner: string;
  readonly runners?: JobRunners;
  readonly log?: WorkerLog;
}

/** A pass stops claiming after this long, so a stop request is never kept waiting by a long queue. */
const PASS_BUDGET_MS = 60_000;

export function startJobLoop(services: CatalogServices, options: JobLoopOptions): JobLoop {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<WorkerReport | undefined> = Promise.resolve(undefined);

  const pass = (): Promise<WorkerReport> => {
    const run = current.then(() =>
      runJobsOnce(services, {
        owner: options.owner,
        budgetMs: PASS_BUDGET_MS,
        runners: options.runners,
        signal: abort.signal,
        log: options.log,
        tier: 'local',
      }),
    );
    // A failed pass (e.g. the store was unreachable) must not stop the passes after it.
    current = run.catch((err: unknown) => {
      (options.log ?? consoleWorkerLog)({ message: 'job pass failed', error: String(err) });
      return undefined;
    });
    return run;
  };

  const schedule = () => {
    if (options.intervalMs <= 0 || abort.signal.aborted) return;
    timer = setTimeout(() => void pass().catch(() => undefined).finally(schedule), options.intervalMs);
    // The loop alone never keeps a process alive.
    timer.unref();
  };
  schedule();

  return {
    runOnce: pass,
    async stop() {
      abort.abort('shutdown');
      clearTimeout(timer);
      await current;
    },
  };
}
