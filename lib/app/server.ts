import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { LocalConfig } from '../config.js';
import { startJobLoop, type JobLoop } from '../jobs/loop.js';
import type { Logger } from '@aws-lambda-powertools/logger';
import { accessLog } from '../http/access-log.js';
import { nodeListener } from '../http/node-adapter.js';
import { errorResponse } from '../http/respond.js';
import { ServiceUnavailableError } from '../errors.js';
import { createLogger } from '../observability/logger.js';
import { listenOrExplain } from './listen.js';
import { createLocalApp } from './local.js';

export interface RunningServer {
  readonly server: Server;
  readonly url: string;
  readonly dataDir: string;
  /** The in-process job worker (docs/jobs.md); its timer is off when RASK_JOBS_INTERVAL_MS is 0. */
  readonly jobs: JobLoop;
  readonly logger: Logger;
  close(): Promise<void>;
}

/** Starts the local catalog server; used by `npm start` and by the end-to-end tests. */
export async function startLocalServer(
  config: LocalConfig,
  options: { logger?: Logger } = {},
): Promise<RunningServer> {
  const logger =
    options.logger ?? createLogger({ service: 'rask', level: config.RASK_LOG_LEVEL, format: config.RASK_LOG_FORMAT });
  // The port first: a port in use must fail before the data directory is written. Until the
  // app is ready, a request gets 503 / code 17 rather than a hanging connection.
  let listener: RequestListener = (_req, res) => {
    const starting = errorResponse(new ServiceUnavailableError('the catalog is starting; retry shortly'), randomUUID());
    res.writeHead(starting.status, starting.headers).end(starting.body);
  };
  const server = createServer((req, res) => listener(req, res));
  // Long index builds hold the connection; the official client sets no timeout either.
  server.requestTimeout = 0;
  await listenOrExplain(server, config.RASK_PORT, config.RASK_HOST);
  let app;
  try {
    app = await createLocalApp(config, { logger });
  } catch (err) {
    server.close();
    throw err;
  }
  listener = nodeListener(app.router, {
    maxBodyBytes: config.RASK_MAX_BODY_BYTES,
    logger,
    onResponse: accessLog(logger),
  });
  const jobs = startJobLoop(app.services, {
    intervalMs: config.RASK_JOBS_INTERVAL_MS,
    owner: `local:${hostname()}:${process.pid}`,
  });
  const { port } = server.address() as AddressInfo;
  const host = config.RASK_HOST.includes(':') ? `[${config.RASK_HOST}]` : config.RASK_HOST;
  return {
    server,
    url: `http://${host}:${port}`,
    dataDir: app.dataDir,
    jobs,
    logger,
    close: async () => {
      // First the worker: a job it has not finished goes back to the queue for the next start.
      await jobs.stop();
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
