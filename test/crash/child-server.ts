/**
 * The crash test's server: the real local server on RASK_DATA_DIR, in a process of its own so
 * the test can SIGKILL it. Prints `READY <url>` once it listens.
 */
import { startLocalServer } from '../../lib/app/server.js';
import { loadLocalConfig } from '../../lib/config.js';

const server = await startLocalServer(
  loadLocalConfig({ ...process.env, RASK_PORT: '0', RASK_HOST: '127.0.0.1', RASK_JOBS_INTERVAL_MS: '0' }),
);
process.stdout.write(`READY ${server.url}\n`);
