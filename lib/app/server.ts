import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import type { LocalConfig } from '../config.js';
import { startJobLoop, type JobLoop } from '../jobs/loop.js';
import { startMaintenanceTimers, type MaintenanceTimers } from '../maintenance/timers.js';
import { nodeListener } from '../http/node-adapter.js';
import { consoleLogger } from './build.js';
import { createLocalApp } from './local.js';
import { formatSummary, startupCleanup, type StartupSummary } from './startup-cleanup.js';

export interface RunningServer {
  readonly server: Server;
  readonly url: string;
  readonly dataDir: string;
  /** The in-process job worker (docs/jobs.md); its timer is off when RASK_JOBS_INTERVAL_MS is 0. */
  readonly jobs: JobLoop;
  /** The maintenance passes on timers (docs/maintenance.md); RASK_*_INTERVAL_MS=0 disables one. */
  readonly maintenance: MaintenanceTimers;
  /** What the start-up cleanup removed and found (lib/app/startup-cleanup.ts). */
  readonly startup: StartupSummary;
  /** Request-body bytes buffered right now (bounded by RASK_MAX_INFLIGHT_BODY_BYTES). */
  inflightBodyBytes(): number;
  /** Start-up notices about authentication (RASK_AUTH), for the operator. */
  readonly notices: readonly string[];
  close(): Promise<void>;
}

/** Starts the local catalog server; used by `npm start` and by the end-to-end tests. */
export async function startLocalServer(config: LocalConfig): Promise<RunningServer> {
  const app = await createLocalApp(config);
  // Before serving: delete what crashes provably left dead, report what the reconcile pass should see.
  const startup = await startupCleanup(app.services, {
    registryRoot: path.join(app.dataDir, 'registry'),
    warehouseRoots: await warehouseRootsUnder(path.join(app.dataDir, 'warehouses')),
  });
  console.error(formatSummary(startup));
  const listener = nodeListener(app.router, {
    maxBodyBytes: config.RASK_MAX_BODY_BYTES,
    maxInflightBodyBytes: config.RASK_MAX_INFLIGHT_BODY_BYTES,
    logger: consoleLogger,
  });
  const server = createServer(
    {
      // Timeouts are enforced by a periodic sweep (default every 30 s); sweep often enough that
      // a short configured timeout means what it says.
      connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(config.RASK_HEADERS_TIMEOUT_MS / 2))),
      headersTimeout: config.RASK_HEADERS_TIMEOUT_MS,
      // Receiving the request (headers and body) is bounded; answering is not: a long index build
      // holds the connection, and the official client sets no timeout either. Node 20 treats
      // requestTimeout = 0 as "no headers timeout" too, which held idle sockets forever.
      requestTimeout: config.RASK_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: config.RASK_KEEP_ALIVE_TIMEOUT_MS,
    },
    listener,
  );
  server.keepAliveTimeout = config.RASK_KEEP_ALIVE_TIMEOUT_MS;
  server.maxConnections = config.RASK_MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.RASK_PORT, config.RASK_HOST, () => resolve());
  });
  const jobs = startJobLoop(app.services, {
    intervalMs: config.RASK_JOBS_INTERVAL_MS,
    owner: `local:${hostname()}:${process.pid}`,
  });
  const maintenance = startMaintenanceTimers(app.services, {
    sweep: config.RASK_SWEEP_INTERVAL_MS,
    index: config.RASK_INDEX_INTERVAL_MS,
    reconcile: config.RASK_RECONCILE_INTERVAL_MS,
    orphans: config.RASK_ORPHANS_INTERVAL_MS,
  });
  const { port } = server.address() as AddressInfo;
  const host = config.RASK_HOST.includes(':') ? `[${config.RASK_HOST}]` : config.RASK_HOST;
  return {
    server,
    url: `http://${host}:${port}`,
    dataDir: app.dataDir,
    jobs,
    maintenance,
    startup,
    inflightBodyBytes: () => listener.stats().inflightBodyBytes,
    notices: app.notices,
    close: async () => {
      await maintenance.stop();
      // First the worker: a job it has not finished goes back to the queue for the next start.
      await jobs.stop();
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

async function warehouseRootsUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
}
