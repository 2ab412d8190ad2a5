import { startLocalServer } from '../lib/app/server.js';
import { ConfigError, loadLocalConfig, missingAllocatorSettings, unknownLocalVariables } from '../lib/config.js';
import { consoleAssets } from '../console/build.js';

/** `npm start`: the catalog on http://127.0.0.1:2333 with its data under ./.rask. */
async function main(): Promise<void> {
  const config = loadLocalConfig();
  const running = await startLocalServer(config, { console: consoleAssets() });
  const log = running.logger;
  for (const { name, suggestion } of unknownLocalVariables()) {
    log.warn(`unknown configuration variable ${name} is ignored${suggestion ? `; did you mean ${suggestion}?` : ''}`);
  }
  for (const notice of running.notices) log.warn(notice);
  // `npm start` sets them (package.json); started some other way on Linux, memory climbs at each
  // LanceDB session renewal (lib/config.ts, NATIVE_ALLOCATOR_ENV; docs/operations.md, "Memory").
  const allocator = process.platform === 'linux' ? missingAllocatorSettings() : [];
  if (allocator.length > 0) log.warn(`started without ${allocator.join(' ')}: start with them in the environment (npm start does) to keep memory bounded`);
  log.info(`rask listening on ${running.url}`, { dataDir: running.dataDir });
  log.info(`web console: ${running.url}/console/`);
  log.info(`try: connectNamespace('rest', { uri: '${running.url}' }) from @lancedb/lancedb`);
  const stop = (signal: string) => {
    log.info(`${signal}: shutting down`);
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error('shutdown failed', { err: err instanceof Error ? err.stack : String(err) });
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  // Configuration errors (a bad RASK_* value, a port in use) are one line, not a stack trace.
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
