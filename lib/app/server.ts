import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { LocalConfig } from '../config.js';
import { startJobLoop, type JobLoop } from '../jobs/loop.js';
import { nodeListener } from '../http/node-adapter.js';
import { consoleLogger } from './build.js';
import { createLocalApp } from './local.js';

export interface RunningServer {
  readonly server: Server;
  readonly url: string;
  readonly dataDir: string;
  /** The in-process job worker (docs/jobs.md); its timer is off when RASK_JOBS_INTERVAL_MS is 0. */
  readonly jobs: JobLoop;
  /** Start-up notices about authentication (RASK_AUTH), for the operator. */
  readonly notices: readonly string[];
  close(): Promise<void>;
}

/** Starts the local catalog server; used by `npm start` and by the end-to-end tests. */
export async function startLocalServer(config: LocalConfig): Promise<RunningServer> {
  const app = await createLocalApp(config);
  const server = createServer(nodeListener(app.router, { maxBodyBytes: config.RASK_MAX_BODY_BYTES, logger: consoleLogger }));
  // Long index builds hold the connection; the official client sets no timeout either.
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.RASK_PORT, config.RASK_HOST, () => resolve());
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
    notices: app.notices,
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
