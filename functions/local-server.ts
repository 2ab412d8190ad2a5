import { startLocalServer } from '../lib/app/server.js';
import { ConfigError, loadLocalConfig } from '../lib/config.js';

/** `npm start`: the catalog on http://127.0.0.1:2333 with its data under ./.rask. */
async function main(): Promise<void> {
  const config = loadLocalConfig();
  const running = await startLocalServer(config);
  console.log(`rask listening on ${running.url}`);
  console.log(`data in ${running.dataDir}`);
  for (const notice of running.notices) console.warn(notice);
  console.log(`try: connectNamespace('rest', { uri: '${running.url}' }) from @lancedb/lancedb`);
  const stop = (signal: string) => {
    console.log(`${signal}: shutting down`);
    running.close().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
