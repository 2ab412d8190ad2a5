/**
 * The WorkQueue port on DynamoDB: the stack's work-queue table (infra/constructs/queue.ts).
 *
 * The object-store queue (lib/queue/store.ts) lists and reads every live job on each claim,
 * which is right for a handful of jobs and wrong for ten thousand. Here a claim asks the due
 * index for the jobs whose time has come, and one page answers it whatever else is queued.
 *
 * One item per job (attribute names are WORK_QUEUE_SCHEMA's):
 *
 *   pk     = jobs/<project>             every job of a project, by id (listLive)
 *   sk     = <job id>
 *   job    = the JobRecord as JSON       (kept exact: the record is what the transitions read)
 *   v      = a fresh UUID on every write: the version a conditional write is checked against
 *   state  = live | done                (retire flips it: no copy, no move protocol)
 *   gsi1pk = due/<project>  gsi1sk = <due ISO time> <id>   while live (listDue)
 *   gsi1pk = done/<project> gsi1sk = <id>                  once retired (listRetired)
 *   ttl    = epoch seconds: finishedAt + retention, once retired (DynamoDB deletes it later)
 *
 * "Due" is when the claim's WHERE clause (lib/queue/transitions.ts `claimable`) can first hold:
 * a queued job's not-before time, a running job's lease end, and the epoch for a finished job
 * not yet retired (so the next claim walk retires it). The index is eventually consistent, so
 * it may hand out a stale item: the claim re-checks it and writes with a condition on `v`, so a
 * stale item costs one failed write, never a double claim.
 *
 * Every write is conditional on `v` (and on `state`, which the etag names), and a failed
 * condition throws ConditionFailedError, exactly as the object-store implementation does.
 */
import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { isJobId } from '../../queue/ids.js';
import { RATE_BUCKET_PREFIX } from './dynamo-rate-buckets.js';
import { DEFAULT_JOB_POLICY, isTerminal, type JobRecord } from '../../ports/job-record.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import type { JobPage, PageRequest, RetiredPage, WorkQueue } from '../../ports/work-queue.js';
import { encodeSegment } from '../../registry/keys.js';
import type { Versioned } from '../../ports/object-store.js';

/** Must match infra/constructs/queue.ts WORK_QUEUE_SCHEMA (a test compares them). */
export const DYNAMO_QUEUE_ATTRIBUTES = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttl: 'ttl',
  index: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  rateBucketPrefix: RATE_BUCKET_PREFIX,
} as const;

type State = 'live' | 'done';

export interface DynamoWorkQueueOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly project: string;
  /** How long DynamoDB keeps a retired job (the TTL); the prune may remove it sooner. */
  readonly retentionMs?: number;
}

const EPOCH = new Date(0).toISOString();
const RETIRE_ATTEMPTS = 10;

/** When the claim's WHERE clause can first hold for this job (see the header). */
export function dueTime(job: JobRecord): string {
  if (job.status === 'Queued') return job.notBefore;
  if (job.status === 'Running' && job.lease) return job.lease.until;
  return EPOCH;
}

const s = (value: string): AttributeValue => ({ S: value });

export class DynamoWorkQueue implements WorkQueue {
  private readonly client: DynamoDBClient;
  private readonly table: string;
  private readonly pk: string;
  private readonly duePk: string;
  private readonly donePk: string;
  private readonly retentionMs: number;

  constructor(options: DynamoWorkQueueOptions) {
    this.client = options.client;
    this.table = options.tableName;
    const project = encodeSegment(options.project);
    this.pk = `jobs/${project}`;
    this.duePk = `due/${project}`;
    this.donePk = `done/${project}`;
    this.retentionMs = options.retentionMs ?? DEFAULT_JOB_POLICY.retentionMs;
  }

  private key(id: string): Record<string, AttributeValue> {
    return { pk: s(this.pk), sk: s(id) };
  }

  async insert(job: JobRecord): Promise<void> {
    await this.conditional(job.id, 'exists', () =>
      this.client.send(
        new PutItemCommand({
          TableName: this.table,
          Item: {
            ...this.key(job.id),
            job: s(JSON.stringify(job)),
            v: s(randomUUID()),
            state: s('live'),
            gsi1pk: s(this.duePk),
            gsi1sk: s(`${dueTime(job)} ${job.id}`),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async read(id: string): Promise<Versioned<JobRecord> | undefined> {
    if (!isJobId(id)) return undefined;
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.table, Key: this.key(id), ConsistentRead: true }));
    return Item ? this.versioned(Item) : undefined;
  }

  async replace(job: JobRecord, etag: string): Promise<string> {
    const { state, v } = untag(etag);
    const next = randomUUID();
    // A live job's due time moves with the record; a retired one keeps its place in the done index.
    const [update, values]: [string, Record<string, AttributeValue>] =
      state === 'live'
        ? ['SET job = :job, v = :next, gsi1sk = :due', { ':due': s(`${dueTime(job)} ${job.id}`) }]
        : ['SET job = :job, v = :next', {}];
    await this.conditional(job.id, 'etag-mismatch', () =>
      this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.key(job.id),
          UpdateExpression: update,
          ConditionExpression: 'v = :v AND #state = :state',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':job': s(JSON.stringify(job)), ':next': s(next), ':v': s(v), ':state': s(state), ...values },
        }),
      ),
    );
    return tag(state, next);
  }

  async listLive(page: PageRequest): Promise<JobPage> {
    const jobs: Versioned<JobRecord>[] = [];
    const unreadable: string[] = [];
    let start: Record<string, AttributeValue> | undefined = page.startAfter === undefined ? undefined : this.key(page.startAfter);
    // A filter applies after DynamoDB's page limit, so a page may come back short: keep asking.
    while (jobs.length + unreadable.length < page.limit) {
      const out = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          FilterExpression: '#state = :live',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':pk': s(this.pk), ':live': s('live') },
          ExclusiveStartKey: start,
          Limit: page.limit - jobs.length - unreadable.length,
          ConsistentRead: true,
        }),
      );
      this.collect(out.Items ?? [], jobs, unreadable);
      start = out.LastEvaluatedKey;
      if (!start) return { jobs, unreadable };
    }
    const next = start?.sk?.S;
    return next === undefined ? { jobs, unreadable } : { jobs, unreadable, next };
  }

  /**
   * Live jobs whose due time has come by `now`, soonest due first: a superset of what is
   * claimable at `now` (the index lags writes a little; the claimer re-checks every record).
   * `startAfter` is the opaque `next` of the previous page.
   */
  async listDue(now: Date, page: PageRequest): Promise<JobPage> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: DYNAMO_QUEUE_ATTRIBUTES.index.name,
        // `<time> <id>` < `<now>!` for every time ≤ now (' ' sorts before '!').
        KeyConditionExpression: 'gsi1pk = :due AND gsi1sk < :bound',
        ExpressionAttributeValues: { ':due': s(this.duePk), ':bound': s(`${now.toISOString()}!`) },
        ExclusiveStartKey: page.startAfter === undefined ? undefined : decodeCursor(page.startAfter),
        Limit: page.limit,
      }),
    );
    const jobs: Versioned<JobRecord>[] = [];
    const unreadable: string[] = [];
    this.collect(out.Items ?? [], jobs, unreadable);
    return { jobs, unreadable, ...(out.LastEvaluatedKey ? { next: encodeCursor(out.LastEvaluatedKey) } : {}) };
  }

  async retire(id: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const found = await this.read(id);
      if (!found || untag(found.etag).state === 'done' || !isTerminal(found.value.status)) return;
      const finished = Date.parse(found.value.finishedAt ?? found.value.updatedAt);
      try {
        await this.conditional(id, 'etag-mismatch', () =>
          this.client.send(
            new UpdateItemCommand({
              TableName: this.table,
              Key: this.key(id),
              UpdateExpression: 'SET #state = :done, v = :next, gsi1pk = :donePk, gsi1sk = :id, #ttl = :ttl',
              ConditionExpression: 'v = :v',
              ExpressionAttributeNames: { '#state': 'state', '#ttl': DYNAMO_QUEUE_ATTRIBUTES.ttl },
              ExpressionAttributeValues: {
                ':done': s('done'),
                ':next': s(randomUUID()),
                ':donePk': s(this.donePk),
                ':id': s(id),
                ':ttl': { N: String(Math.ceil((finished + this.retentionMs) / 1000)) },
                ':v': s(untag(found.etag).v),
              },
            }),
          ),
        );
        return;
      } catch (err) {
        // Someone wrote the job meanwhile (AlterTransaction): look again.
        if (!(err instanceof ConditionFailedError) || attempt >= RETIRE_ATTEMPTS) throw err;
      }
    }
  }

  async listRetired(page: PageRequest): Promise<RetiredPage> {
    const after = page.startAfter;
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: DYNAMO_QUEUE_ATTRIBUTES.index.name,
        KeyConditionExpression: 'gsi1pk = :done',
        ExpressionAttributeValues: { ':done': s(this.donePk) },
        ProjectionExpression: 'sk',
        ExclusiveStartKey: after === undefined ? undefined : { ...this.key(after), gsi1pk: s(this.donePk), gsi1sk: s(after) },
        Limit: page.limit,
      }),
    );
    const ids = (out.Items ?? []).map((i) => i.sk?.S ?? '').filter(isJobId);
    const last = out.LastEvaluatedKey?.sk?.S;
    return last ? { ids, next: last } : { ids };
  }

  async remove(id: string, etag: string): Promise<void> {
    const { state, v } = untag(etag);
    // Only retired jobs are deleted; a live record is the job itself.
    if (state !== 'done') throw new ConditionFailedError(`${this.pk}/${id}`, 'etag-mismatch');
    await this.conditional(id, 'etag-mismatch', () =>
      this.client.send(
        new DeleteItemCommand({
          TableName: this.table,
          Key: this.key(id),
          ConditionExpression: 'v = :v AND #state = :done',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':v': s(v), ':done': s('done') },
        }),
      ),
    );
  }

  private versioned(item: Record<string, AttributeValue>): Versioned<JobRecord> {
    const state = item.state?.S === 'done' ? 'done' : 'live';
    return { value: JSON.parse(item.job?.S ?? '') as JobRecord, etag: tag(state, item.v?.S ?? '') };
  }

  private collect(items: Record<string, AttributeValue>[], jobs: Versioned<JobRecord>[], unreadable: string[]): void {
    for (const item of items) {
      try {
        jobs.push(this.versioned(item));
      } catch {
        // One corrupt item must not stop every other job from running; the worker reports it.
        unreadable.push(item.sk?.S ?? '?');
      }
    }
  }

  /** Runs a conditional write; a failed condition becomes the port's ConditionFailedError. */
  private async conditional<T>(id: string, reason: ConditionFailedError['reason'], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException || (err as { name?: string }).name === 'ConditionalCheckFailedException') {
        throw new ConditionFailedError(`${this.pk}/${id}`, reason);
      }
      throw err;
    }
  }
}

/** The etag handed out is `<state>:<v>`, so a write knows which state it expects. */
const tag = (state: State, v: string) => `${state}:${v}`;

function untag(etag: string): { state: State; v: string } {
  const i = etag.indexOf(':');
  const state = etag.slice(0, i);
  if (state !== 'live' && state !== 'done') throw new ConditionFailedError(etag, 'etag-mismatch');
  return { state, v: etag.slice(i + 1) };
}

const encodeCursor = (key: Record<string, AttributeValue>) =>
  Buffer.from(JSON.stringify(Object.fromEntries(Object.entries(key).map(([k, v]) => [k, v.S ?? ''])))).toString('base64url');

function decodeCursor(cursor: string): Record<string, AttributeValue> {
  const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, string>;
  return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, s(v)]));
}

/**
 * The client class, re-exported for callers that load this adapter with a dynamic `import()`
 * (lib/app/aws.ts, functions/api-meta.ts): importing the SDK package itself dynamically would
 * keep every one of its commands in the bundle, since a module namespace cannot be tree-shaken.
 */
export { DynamoDBClient } from '@aws-sdk/client-dynamodb';
