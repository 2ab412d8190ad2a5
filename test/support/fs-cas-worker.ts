/**
 * The read-modify-write loop every object store must make converge, plus a process entry point
 * that runs it once against an FsObjectStore, so the contention test can pit separate processes
 * (not just promises) against each other. The in-process contract test imports `casIncrement`
 * from here so both tests exercise the identical loop.
 *
 * As a process: `node --import tsx test/support/fs-cas-worker.ts <root> <key>` prints `ready`,
 * waits for any line on stdin (the start signal, so all workers race at once), increments the
 * counter at <key>, prints `{"attempts":n}` and exits.
 */
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { ConditionFailedError, type ObjectStore } from '../../lib/ports/object-store.js';

/** Adds one to the decimal counter at `key`; returns how many attempts it took. */
export async function casIncrement(store: ObjectStore, key: string, maxAttempts = 500): Promise<number> {
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const current = await store.get(key);
    const next = String(Number(current?.body.toString() ?? '0') + 1);
    try {
      if (current === undefined) await store.putIfAbsent(key, next);
      else await store.putIfMatch(key, next, current.etag);
      return attempt;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
    // Jitter so losers do not all re-read in lockstep and collide again.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
  }
  throw new Error(`CAS increment of ${key} did not succeed in ${maxAttempts} attempts`);
}

async function main(root: string, key: string): Promise<void> {
  const store = new FsObjectStore(root);
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
  process.stdin.destroy();
  const attempts = await casIncrement(store, key);
  process.stdout.write(`${JSON.stringify({ attempts })}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [root, key] = process.argv.slice(2);
  main(root, key).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
