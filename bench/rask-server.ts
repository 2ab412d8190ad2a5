/**
 * rask's local server for bench/data-plane.ts, in a process of its own (as the bare LanceDB
 * server is), logging warnings only.
 *
 *   npx tsx bench/rask-server.ts <dir>     (prints `listening <url>` once ready)
 */
import { startLocalServer } from '../lib/app/server.js';
import { loadLocalConfig } from '../lib/config.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: rask-server.ts <dir>');
const server = await startLocalServer(loadLocalConfig({ RASK_PORT: '0', RASK_DATA_DIR: dir, RASK_LOG_LEVEL: 'warn' }));
console.log(`listening ${server.url}`);
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
