import type { CatalogServices } from '../catalog/services.js';
import { relayChanges, type RelayOptions, type RelayReport } from '../maintenance/change-relay.js';

export interface RelayTimer {
  /** One cycle now (after any cycle in progress). */
  runOnce(): Promise<RelayReport>;
  stop(): Promise<void>;
}

/**
 * The local server's change relay on a timer (RASK_CHANGES_SCAN_INTERVAL_MS; docs/events.md,
 * "Commits straight to storage"): a cycle re-armed only after the previous one ended, so two
 * never overlap; a failed cycle is logged and the next one still comes.
 */
export function startRelayTimer(
  services: CatalogServices,
  intervalMs: number,
  options: RelayOptions,
  log: (level: 'info' | 'error', message: string, fields: Record<string, unknown>) => void,
): RelayTimer {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const run = (): Promise<RelayReport> => {
    const next = running.then(() => relayChanges(services, options));
    running = next.catch(() => undefined);
    return next;
  };
  const arm = () => {
    if (stopped || intervalMs <= 0) return;
    timer = setTimeout(() => {
      run()
        .then((r) => {
          if (r.storageCommits > 0 || r.problems.length > 0) log(r.problems.length > 0 ? 'error' : 'info', 'change relay', { ...r });
        })
        .catch((err: unknown) => log('error', 'change relay failed', { error: String(err) }))
        .finally(arm);
    }, intervalMs);
    timer.unref();
  };
  arm();
  return {
    runOnce: run,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
