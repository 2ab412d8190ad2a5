/**
 * What a claim costs on the object-store work queue: the walk a worker makes when nothing is
 * ready (the worst case: every live job listed and read). Results go in docs/jobs.md.
 *
 *   npx tsx bench/job-claims.ts [live,live,...]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FsObjectStore } from '../lib/adapters/local/fs-object-store.js';
import type { JobContext } from '../lib/queue/context.js';
import { claimNext, enqueue } from '../lib/queue/jobs.js';
import { DEFAULT_JOB_POLICY } from '../lib/ports/job-record.js';
import { RegistryWorkQueue } from '../lib/queue/store.js';
import { Registry } from '../lib/registry/registry.js';

const counts = (process.argv[2] ?? '10,100,1000').split(',').map(Number);
const RUNS = 5;

for (const live of counts) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rask-claims-'));
  try {
    const registry = new Registry(new FsObjectStore(dir));
    const ctx: JobContext = {
      queue: new RegistryWorkQueue(registry, 'bench'),
      policy: DEFAULT_JOB_POLICY,
      now: () => new Date(),
      retrying: (what, attempt) => registry.retrying(what, attempt),
    };
    for (let i = 0; i < live; i++) await enqueue(ctx, { type: 'queued', params: {} });
    const start = performance.now();
    // A worker for another type: it must look at every job and claim none.
    for (let i = 0; i < RUNS; i++) await claimNext(ctx, 'bench', ['other']);
    console.log(`${live} live jobs: a claim walk that finds nothing takes ${((performance.now() - start) / RUNS).toFixed(1)} ms (filesystem store)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
