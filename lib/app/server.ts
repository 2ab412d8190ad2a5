import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { lanceCacheBudgets, type LocalConfig } from '../config.js';
import { startJobLoop, type JobLoop } from '../jobs/loop.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ChildTaskRunner } from '../adapters/local/child-task-runner.js';
import type { TaskTier } from '../queue/context.js';
import { LOCAL_TASK_GRACE_MS, tierLimits } from '../queue/tiers.js';
import { dataRunners } from '../jobs/runners/index.js';
import { maintenanceRunners } from '../maintenance/table-jobs.js';
import { startMaintenanceTimers, type MaintenanceTimers } from '../maintenance/timers.js';
import type { Logger } from '@aws-lambda-powertools/logger';
import { accessLog } from '../http/access-log.js';
import { withConsole, type ConsoleAssets } from '../http/console-route.js';
import { localGate } from '../http/local-gate.js';
import { nodeListener } from '../http/node-adapter.js';
import { errorResponse } from '../http/respond.js';
import { ServiceUnavailableError } from '../errors.js';
import { createLogger } from '../observability/logger.js';
import { listenOrExplain } from './listen.js';
import { createLocalApp } from './local.js';
import { recoverChanges } from './change-recovery.js';
import { startRelayTimer, type RelayTimer } from './relay-timer.js';
import { startupCleanup, type StartupSummary } from './startup-cleanup.js';

export interface RunningServer {
  readonly server: Server;
  readonly url: string;
  readonly dataDir: string;
  /** The in-process job worker (docs/jobs.md); its timer is off when RASK_JOBS_INTERVAL_MS is 0. */
  readonly jobs: JobLoop;
  /** The maintenance passes on timers (docs/maintenance.md); RASK_*_INTERVAL_MS=0 disables one. */
  readonly maintenance: MaintenanceTimers;
  /** The change relay's scan for commits made straight to storage (RASK_CHANGES_SCAN_INTERVAL_MS). */
  readonly changeRelay: RelayTimer;
  /** What the start-up cleanup removed and found (lib/app/startup-cleanup.ts). */
  readonly startup: StartupSummary;
  /** Request-body bytes buffered right now (bounded by RASK_MAX_INFLIGHT_BODY_BYTES). */
  inflightBodyBytes(): number;
  /** Start-up notices about authentication (RASK_AUTH), for the operator. */
  readonly notices: readonly string[];
  readonly logger: Logger;
  close(): Promise<void>;
}

/** Starts the local catalog server; used by `npm start` and by the end-to-end tests. */
export async function startLocalServer(
  config: LocalConfig,
  options: {
    logger?: Logger;
    /** The web console's bundle, served at /console (docs/console.md); `npm start` passes console/build.ts. */
    console?: ConsoleAssets;
  } = {},
): Promise<RunningServer> {
  const logger =
    options.logger ?? createLogger({ service: 'rask', level: config.RASK_LOG_LEVEL, format: config.RASK_LOG_FORMAT });
  // The port first: a port in use must fail before the data directory is written. Until the
  // app is ready, a request gets 503 / code 17 rather than a hanging connection.
  let listener: RequestListener = (_req, res) => {
    const starting = errorResponse(new ServiceUnavailableError('the catalog is starting; retry shortly'), randomUUID());
    res.writeHead(starting.status, starting.headers).end(starting.body);
  };
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
    (req, res) => listener(req, res),
  );
  server.keepAliveTimeout = config.RASK_KEEP_ALIVE_TIMEOUT_MS;
  server.maxConnections = config.RASK_MAX_CONNECTIONS;
  await listenOrExplain(server, config.RASK_PORT, config.RASK_HOST);
  let app;
  let startup: StartupSummary;
  // Before any data operation: the process's one LanceDB session takes its size from here.
  const { configureLanceSession } = await import('../adapters/lance/session.js');
  const budgets = lanceCacheBudgets(config);
  if (!configureLanceSession(budgets)) logger.warn('the LanceDB session was sized before this server started; its budgets stay');
  try {
    app = await createLocalApp(config, { logger, tasks: localTaskTier(config) });
    // Before serving: delete what crashes provably left dead, report what the reconcile pass should see.
    startup = await startupCleanup(app.services, {
      registryRoot: path.join(app.dataDir, 'registry'),
      warehouseRoots: await warehouseRootsUnder(path.join(app.dataDir, 'warehouses')),
    });
    // Before serving, too: every change a killed process wrote but did not log gets its event.
    app.changes.cut();
    const recovered = await recoverChanges(app.services.registry.store, app.changes, path.join(app.dataDir, '.changes-recovered'));
    if (recovered.appended > 0) logger.info('change events recovered', { ...recovered });
  } catch (err) {
    server.close();
    throw err;
  }
  logger.info('start-up cleanup', { ...startup });
  const { port } = server.address() as AddressInfo;
  const api = nodeListener(options.console ? withConsole(app.router, options.console) : app.router, {
    gate: localGate({ port, host: config.RASK_HOST, allowedHosts: config.RASK_ALLOWED_HOSTS, allowedOrigins: config.RASK_ALLOWED_ORIGINS }),
    maxBodyBytes: config.RASK_MAX_BODY_BYTES,
    maxInflightBodyBytes: config.RASK_MAX_INFLIGHT_BODY_BYTES,
    logger,
    onResponse: accessLog(logger),
  });
  listener = api;
  const jobs = startJobLoop(app.services, {
    intervalMs: config.RASK_JOBS_INTERVAL_MS,
    owner: `local:${hostname()}:${process.pid}`,
    runners: { ...dataRunners, ...maintenanceRunners },
    log: entryLog(logger, 'jobs'),
  });
  const maintenance = startMaintenanceTimers(
    app.services,
    {
      sweep: config.RASK_SWEEP_INTERVAL_MS,
      index: config.RASK_INDEX_INTERVAL_MS,
      reconcile: config.RASK_RECONCILE_INTERVAL_MS,
      orphans: config.RASK_ORPHANS_INTERVAL_MS,
    },
    entryLog(logger, 'maintenance'),
    // Per-table jobs only when this process runs the job loop; otherwise nobody would run them.
    { fanOut: config.RASK_JOBS_INTERVAL_MS > 0 },
  );
  const changeRelay = startRelayTimer(app.services, config.RASK_CHANGES_SCAN_INTERVAL_MS, { settleMs: config.RASK_CHANGES_SETTLE_MS }, (level, message, fields) =>
    level === 'error' ? logger.error(message, fields) : logger.info(message, fields),
  );
  const memory = await memoryStatsLine(config.RASK_MEMORY_STATS_MS, logger, server);
  const host = config.RASK_HOST.includes(':') ? `[${config.RASK_HOST}]` : config.RASK_HOST;
  return {
    server,
    url: `http://${host}:${port}`,
    dataDir: app.dataDir,
    jobs,
    maintenance,
    changeRelay,
    startup,
    inflightBodyBytes: () => api.stats().inflightBodyBytes,
    notices: app.notices,
    logger,
    close: async () => {
      clearInterval(memory);
      await maintenance.stop();
      await changeRelay.stop();
      // First the worker: a job it has not finished goes back to the queue for the next start.
      await jobs.stop();
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

/**
 * The job worker's and the maintenance timers' entries (`{level?, message, ...}`) as lines of the
 * server's logger, so RASK_LOG_LEVEL and RASK_LOG_FORMAT hold for them too (docs/operations.md).
 */
function entryLog(logger: Logger, component: string) {
  return ({ level, message, ...fields }: Readonly<Record<string, unknown>>): void => {
    const line = String(message ?? component);
    const rest = { component, ...fields };
    if (level === 'error') logger.error(line, rest);
    else if (level === 'warn') logger.warn(line, rest);
    else if (level === 'debug') logger.debug(line, rest);
    else logger.info(line, rest);
  };
}

async function warehouseRootsUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
}

/**
 * With RASK_MEMORY_STATS_MS set, one `memory` line every so often: the process's RSS, heap and
 * external memory and the data plane's cache use (docs/operations.md, "Memory"), and since the
 * last line the event loop's worst delay and the connections accepted (a stalled loop or clients
 * reconnecting show there first). A log line only: no HTTP answer carries it.
 */
async function memoryStatsLine(intervalMs: number, logger: Logger, server: Server): Promise<NodeJS.Timeout | undefined> {
  if (intervalMs <= 0) return undefined;
  const { memoryStats } = await import('../adapters/lance/memory-stats.js');
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let accepted = 0;
  server.on('connection', () => accepted++);
  const timer = setInterval(() => {
    const loop = { eventLoopDelayMaxMs: Math.round(delay.max / 1e6), eventLoopDelayP99Ms: Math.round(delay.percentile(99) / 1e6), connectionsAccepted: accepted };
    delay.reset();
    accepted = 0;
    logger.info('memory', { ...memoryStats(), ...loop });
  }, intervalMs);
  timer.unref();
  return timer;
}

/**
 * The local task tier (docs/jobs.md, "Tiers"; RASK_JOBS_TASK_TIER): task-tier jobs run in a
 * child process from the container's entry, with this server's configuration, so a large build
 * or a native crash ends the child and never the server. Only from a source tree (the entry is
 * TypeScript, run with tsx); elsewhere every job stays in the server's loop.
 */
function localTaskTier(config: LocalConfig): TaskTier | undefined {
  if (config.RASK_JOBS_TASK_TIER !== 'child') return undefined;
  const entry = fileURLToPath(new URL('../../functions/job-task.ts', import.meta.url));
  if (!existsSync(entry)) return undefined;
  const runner = new ChildTaskRunner({
    command: [process.execPath, '--import', 'tsx', entry],
    cwd: path.dirname(path.dirname(entry)),
    env: { ...process.env, RASK_TASK_CONFIG_JSON: JSON.stringify(config) },
    killAfterMs: config.RASK_JOBS_TASK_STOP_GRACE_MS,
  });
  return {
    runner,
    concurrency: config.RASK_JOBS_TASK_CONCURRENCY,
    graceMs: LOCAL_TASK_GRACE_MS,
    limits: tierLimits({ createIndexCostRows: config.RASK_JOBS_TASK_INDEX_COST_ROWS, backfillBytes: config.RASK_JOBS_TASK_BACKFILL_BYTES, sweepBytes: config.RASK_JOBS_TASK_SWEEP_BYTES }),
  };
}
