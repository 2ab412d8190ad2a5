/** The work-queue contract, and what only the DynamoDB adapter promises, on DynamoDB served by dynalite. */
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORK_QUEUE_SCHEMA } from '../../infra/constructs/queue.js';
import { DYNAMO_QUEUE_ATTRIBUTES, DynamoWorkQueue } from '../../lib/adapters/aws/dynamo-work-queue.js';
import { jobContext } from '../../lib/queue/context.js';
import { claimNext, complete, describeJob, enqueue } from '../../lib/queue/jobs.js';
import { runJobsOnce } from '../../lib/jobs/worker.js';
import { keys } from '../../lib/registry/keys.js';
import { type Dynalite, startDynalite } from '../support/dynalite.js';
import { servicesOver } from '../support/services.js';
import { runWorkQueueContract } from './work-queue.suite.js';

let db: Dynalite;
let client: DynamoDBClient;

beforeAll(async () => {
  db = await startDynalite();
  client = db.client;
});

afterAll(() => db?.stop());

async function dynamoServices() {
  // Each conditional write is an HTTP round trip here, so eight writers contending for one job
  // need more rounds than the in-process stores before every one has landed.
  const f = await servicesOver('memory', { retry: { attempts: 40, baseDelayMs: 5, maxDelayMs: 100 } });
  const tableName = await db.newQueueTable();
  const queue = new DynamoWorkQueue({ client, tableName, project: f.services.project });
  const queueFor = (project: string) => (project === f.services.project ? queue : new DynamoWorkQueue({ client, tableName, project }));
  return { f, tableName, queue, services: { ...f.services, jobs: { queueFor } } };
}

runWorkQueueContract('DynamoDB on dynalite', async () => {
  const { f, tableName, services } = await dynamoServices();
  return {
    services,
    plantUnreadable: async (id) =>
      void (await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: {
            pk: { S: `jobs/${services.project}` },
            sk: { S: id },
            job: { S: '{not json' },
            v: { S: 'x' },
            state: { S: 'live' },
            gsi1pk: { S: `due/${services.project}` },
            gsi1sk: { S: `${new Date(0).toISOString()} ${id}` },
          },
        }),
      )),
    cleanup: () => f.cleanup(),
  };
});

describe('the DynamoDB work queue', () => {
  it('uses the attribute names of the table the stack creates', () => {
    expect(DYNAMO_QUEUE_ATTRIBUTES).toEqual(WORK_QUEUE_SCHEMA);
  });

  it('lists only due jobs for a claim: jobs waiting for their not-before time are not read', async () => {
    const { f, queue, services } = await dynamoServices();
    try {
      const ctx = jobContext(services);
      const later = { ...ctx, now: () => new Date(Date.now() + 60_000) };
      // Five jobs not due for a minute, one due now.
      const waiting = [];
      for (let i = 0; i < 5; i++) waiting.push(await enqueue(later, { type: 't', params: {} }));
      const due = await enqueue(ctx, { type: 't', params: {} });
      const page = await queue.listDue(new Date(), { limit: 100 });
      expect(page.jobs.map((j) => j.value.id)).toEqual([due.id]);
      expect((await queue.listLive({ limit: 100 })).jobs).toHaveLength(6);
      // The claim takes the due one; after it nothing is due until the lease or not-before ends.
      expect((await claimNext(ctx, 'w', ['t'])).claim?.job.id).toBe(due.id);
      expect((await queue.listDue(new Date(), { limit: 100 })).jobs).toEqual([]);
      expect((await queue.listDue(new Date(Date.now() + 61_000), { limit: 100 })).jobs.map((j) => j.value.id).sort()).toEqual(
        waiting.map((j) => j.id).sort(),
      );
    } finally {
      await f.cleanup();
    }
  });

  it('pages through due and live jobs without losing or repeating one', async () => {
    const { f, queue, services } = await dynamoServices();
    try {
      const ctx = jobContext(services);
      const ids = [];
      for (let i = 0; i < 7; i++) ids.push((await enqueue(ctx, { type: 't', params: { i } })).id);
      for (const list of [(p: { startAfter?: string; limit: number }) => queue.listDue(new Date(), p), (p: { startAfter?: string; limit: number }) => queue.listLive(p)]) {
        const seen: string[] = [];
        let startAfter: string | undefined;
        do {
          const page = await list({ startAfter, limit: 3 });
          expect(page.jobs.length).toBeLessThanOrEqual(3);
          seen.push(...page.jobs.map((j) => j.value.id));
          startAfter = page.next;
        } while (startAfter !== undefined);
        expect(seen.sort()).toEqual([...ids].sort());
      }
    } finally {
      await f.cleanup();
    }
  });

  it('sets the TTL from the finish time and the retention when a job retires', async () => {
    const { f, tableName, services } = await dynamoServices();
    try {
      const queue = new DynamoWorkQueue({ client, tableName, project: services.project, retentionMs: 3_600_000 });
      const ctx = jobContext({ ...services, jobs: { queueFor: () => queue } });
      const job = await enqueue(ctx, { type: 't', params: {} });
      const held = (await claimNext(ctx, 'w', ['t'])).claim!;
      const done = await complete(ctx, held, {});
      const { Item } = await client.send(
        new GetItemCommand({ TableName: tableName, Key: { pk: { S: `jobs/${services.project}` }, sk: { S: job.id } }, ConsistentRead: true }),
      );
      expect(Item?.state?.S).toBe('done');
      expect(Number(Item?.ttl?.N)).toBe(Math.ceil((Date.parse(done.finishedAt!) + 3_600_000) / 1000));
      expect(Item?.gsi1pk?.S).toBe(`done/${services.project}`);
    } finally {
      await f.cleanup();
    }
  });

  it('refuses stale etags with ConditionFailedError, like the registry store', async () => {
    const { f, queue, services } = await dynamoServices();
    try {
      const job = await enqueue(jobContext(services), { type: 't', params: {} });
      const first = (await queue.read(job.id))!;
      await queue.replace({ ...job, summary: { a: '1' } }, first.etag);
      await expect(queue.replace({ ...job, summary: { a: '2' } }, first.etag)).rejects.toMatchObject({ name: 'ConditionFailedError' });
      await expect(queue.insert(job)).rejects.toMatchObject({ name: 'ConditionFailedError', reason: 'exists' });
      // A live job is never removed, whatever its etag.
      await expect(queue.remove(job.id, (await queue.read(job.id))!.etag)).rejects.toMatchObject({ name: 'ConditionFailedError' });
      expect((await queue.read(job.id))!.value.summary).toEqual({ a: '1' });
    } finally {
      await f.cleanup();
    }
  });

  it('keeps each project in its own partition, and the worker runs every project\'s jobs', async () => {
    const { f, tableName, services } = await dynamoServices();
    try {
      await services.registry.create(keys.project('acme'), { kind: 'project', name: 'acme' });
      const acme = { ...services, project: 'acme' };
      const job = await enqueue(jobContext(acme), { type: 't', params: {} });
      const { Item } = await client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'jobs/acme' }, sk: { S: job.id } }, ConsistentRead: true }));
      expect(Item?.state?.S).toBe('live');
      await expect(describeJob(jobContext(services), job.id)).rejects.toThrow(/does not exist/);

      const report = await runJobsOnce(services, { owner: 'w', budgetMs: 30_000, log: () => undefined, runners: { t: async (j) => ({ project: j.id }) } });
      expect(report.ran).toEqual([{ id: job.id, project: 'acme', type: 't', outcome: 'succeeded' }]);
      expect((await describeJob(jobContext(acme), job.id)).status).toBe('Succeeded');
    } finally {
      await f.cleanup();
    }
  });
});
