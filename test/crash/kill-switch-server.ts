/**
 * A crash test's server that kills itself at a chosen registry write: the real local server on
 * RASK_DATA_DIR, with a test-only kill switch. RASK_TEST_KILL_AFTER=<regex>:<n> SIGKILLs the
 * process right after the n-th successful conditional write (put-if-absent, put-if-match,
 * delete-if-match) whose key matches <regex> — every write before it is durable, nothing after
 * it runs, with no timing involved. Only this file reads the variable; the server never does.
 * Prints `READY <url>` once it listens.
 */
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { startLocalServer } from '../../lib/app/server.js';
import { loadLocalConfig } from '../../lib/config.js';

const spec = process.env.RASK_TEST_KILL_AFTER;
if (spec) {
  const at = spec.lastIndexOf(':');
  const match = new RegExp(spec.slice(0, at));
  const count = Number(spec.slice(at + 1));
  let seen = 0;
  const proto = FsObjectStore.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const method of ['putIfAbsent', 'putIfMatch', 'deleteIfMatch']) {
    const original = proto[method];
    proto[method] = async function (this: unknown, ...args: unknown[]) {
      const result = await original.apply(this, args);
      if (match.test(String(args[0])) && ++seen === count) process.kill(process.pid, 'SIGKILL');
      return result;
    };
  }
}

const server = await startLocalServer(
  loadLocalConfig({ ...process.env, RASK_PORT: '0', RASK_HOST: '127.0.0.1', RASK_JOBS_INTERVAL_MS: '0' }),
);
process.stdout.write(`READY ${server.url}\n`);
