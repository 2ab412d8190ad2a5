/**
 * Requests per claim on the two WorkQueue implementations, at 10 and 10,000 queued jobs:
 * the registry store (lib/queue/store.ts; every store call counted) and the DynamoDB adapter
 * (lib/adapters/aws/dynamo-work-queue.ts on dynalite; every request counted by a middleware).
 * Results go in docs/benchmarks.md.
 *
 *   npx tsx bench/queue-claims.ts [10,10000]
 *
 * Three situations per size: every job due (the claim takes the oldest), every job waiting
 * for its not-before time but one (a queue backed off after failures), and nothing due (an
 * idle worker's look). Requests are counted for one claimNext each; seeding is not counted.
 */
import { DynamoWorkQueue } from '../lib/adapters/aws/dynamo-work-queue.js';
import { MemoryObjectStore } from '../lib/adapters/memory/object-store.js';
import type { JobContext } from '../lib/queue/context.js';
import { claimNext } from '../lib/queue/jobs.js';
import { newJobId } from '../lib/queue/ids.js';
import { DEFAULT_JOB_POLICY, type JobRecord } from '../lib/ports/job-record.js';
import { RegistryWorkQueue } from '../lib/queue/store.js';
import type { ObjectStore } from '../lib/ports/object-store.js';
import type { WorkQueue } from '../lib/ports/work-queue.js';
import { Registry } from '../lib/registry/registry.js';
import { startDynalite } from '../test/support/dynalite.js';

const sizes = (process.argv[2] ?? '10,10000').split(',').map(Number);
type Situation = 'all due' | 'one due, rest waiting' | 'none due';
const SITUATIONS: Situation[] = ['all due', 'one due, rest waiting', 'none due'];

/** Counts every call on an object store. */
function counting(store: ObjectStore, counter: { n: number }): ObjectStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        counter.n++;
        return value.apply(target, args);
      };
    },
  });
}

function context(queue: WorkQueue, registry: Registry): JobContext {
  return { queue, policy: DEFAULT_JOB_POLICY, now: () => new Date(), retrying: (w, a) => registry.retrying(w, a) };
}

/** Inserts `n` queued jobs due at `notBefore` (ids carry the real creation time). */
async function seed(queue: WorkQueue, n: number, notBefore: Date): Promise<void> {
  for (let i = 0; i < n; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, () => {
        const at = new Date().toISOString();
        const job: JobRecord = {
          kind: 'job',
          id: newJobId(new Date()),
          type: 'build',
          params: {},
          summary: {},
          status: 'Queued',
          properties: {},
          output: {},
          attempts: 0,
          maxAttempts: DEFAULT_JOB_POLICY.maxAttempts,
          notBefore: notBefore.toISOString(),
          createdAt: at,
          updatedAt: at,
        };
        return queue.insert(job);
      }),
    );
  }
}

/**
 * Requests for one claim in each situation. `none due`, then one due job is added (it is the
 * youngest, so the registry's oldest-first walk meets it last), then a fresh queue all due.
 */
async function measure(n: number, fresh: () => Promise<{ queue: WorkQueue; ctx: JobContext; count: { n: number } }>) {
  const out: Record<Situation, { claimed: boolean; requests: number }> = {} as never;
  const a = await fresh();
  await seed(a.queue, n, new Date(Date.now() + 3_600_000));
  for (const situation of ['none due', 'one due, rest waiting'] as const) {
    if (situation === 'one due, rest waiting') await seed(a.queue, 1, new Date());
    a.count.n = 0;
    const c = await claimNext(a.ctx, 'bench', ['build']);
    out[situation] = { claimed: Boolean(c.claim), requests: a.count.n };
  }
  const b = await fresh();
  await seed(b.queue, n, new Date());
  b.count.n = 0;
  const c = await claimNext(b.ctx, 'bench', ['build']);
  out['all due'] = { claimed: Boolean(c.claim), requests: b.count.n };
  return out;
}

const db = await startDynalite();
const dynamoRequests = { n: 0 };
db.client.middlewareStack.add(
  (next) => async (args) => {
    dynamoRequests.n++;
    return next(args);
  },
  { step: 'initialize', name: 'countRequests' },
);

const rows: string[] = [];
try {
  for (const n of sizes) {
    const onRegistry = await measure(n, async () => {
      const count = { n: 0 };
      const registry = new Registry(counting(new MemoryObjectStore(), count));
      const queue = new RegistryWorkQueue(registry, 'bench');
      return { queue, ctx: context(queue, registry), count };
    });
    const onDynamo = await measure(n, async () => {
      const registry = new Registry(new MemoryObjectStore());
      const queue = new DynamoWorkQueue({ client: db.client, tableName: await db.newQueueTable(), project: 'bench' });
      return { queue, ctx: context(queue, registry), count: dynamoRequests };
    });
    for (const situation of SITUATIONS) {
      const r = onRegistry[situation];
      const d = onDynamo[situation];
      if (r.claimed !== d.claimed) throw new Error(`the two queues disagree on ${situation} at ${n}`);
      rows.push(`| ${n.toLocaleString('en')} | ${situation} | ${r.claimed ? 'yes' : 'no'} | ${r.requests} | ${d.requests} |`);
    }
  }
} finally {
  await db.stop();
}
console.log('| queued jobs | situation | claimed | registry store: object-store requests | DynamoDB: requests |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);
