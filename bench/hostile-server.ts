/**
 * rask's local server for bench/hostile-load.ts, in a process of its own: keys on (so each
 * client is its own principal) and a per-principal rate limit from the arguments.
 *
 *   npx tsx bench/hostile-server.ts <dir> <admin key> <per second> <burst>   (prints `listening <url>`)
 */
import { startLocalServer } from '../lib/app/server.js';
import { loadLocalConfig } from '../lib/config.js';

const [dir, adminKey, perSecond, burst] = process.argv.slice(2);
if (!dir || !adminKey || !perSecond || !burst) throw new Error('usage: hostile-server.ts <dir> <admin key> <per second> <burst>');
const server = await startLocalServer(
  loadLocalConfig({
    RASK_PORT: '0',
    RASK_DATA_DIR: dir,
    RASK_LOG_LEVEL: 'warn',
    RASK_AUTH: 'keys',
    RASK_ADMIN_KEY: adminKey,
    RASK_RATE_PRINCIPAL_PER_SECOND: perSecond,
    RASK_RATE_PRINCIPAL_BURST: burst,
  }),
);
console.log(`listening ${server.url}`);
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
