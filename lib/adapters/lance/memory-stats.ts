import { cachedConnections, retiredConnections, retiringSessions } from './connections.js';
import { lanceCacheUse, uncollectedSessions } from './session.js';
import { keptHandles } from './table-handles.js';

/**
 * One sample of what this process holds: Node's own figures and the data plane's caches. The
 * local server prints it every RASK_MEMORY_STATS_MS (a log line, never an HTTP answer: tenants
 * do not see it); the data function records the LanceDB figures as metrics (docs/operations.md,
 * "Memory"). Reading it loads nothing: before the first data operation the LanceDB fields are 0.
 */
export interface MemoryStats {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
  readonly lanceCacheBytes: number;
  readonly lanceCacheItems: number;
  readonly lanceCacheBudgetBytes: number;
  /** Times the session was renewed for holding too many entries (session.ts). */
  readonly lanceSessionRenewals: number;
  readonly keptHandles: number;
  readonly connections: number;
  /** Connections waiting to be closed, and the renewed sessions they keep (connections.ts, "retirement"). */
  readonly retiredConnections: number;
  readonly retiringSessions: number;
  /** Sessions V8 has not collected yet, the current one included: what keeps a renewed one's memory (session.ts). */
  readonly uncollectedSessions: number;
}

export function memoryStats(): MemoryStats {
  const m = process.memoryUsage();
  const lance = lanceCacheUse();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    lanceCacheBytes: lance?.bytes ?? 0,
    lanceCacheItems: lance?.items ?? 0,
    lanceCacheBudgetBytes: lance?.budgetBytes ?? 0,
    lanceSessionRenewals: lance?.renewals ?? 0,
    keptHandles: keptHandles(),
    connections: cachedConnections(),
    retiredConnections: retiredConnections(),
    retiringSessions: retiringSessions(),
    uncollectedSessions: uncollectedSessions(),
  };
}
