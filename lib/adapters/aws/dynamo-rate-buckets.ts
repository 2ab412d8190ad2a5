/**
 * Shared token buckets (lib/ports/rate-buckets.ts) as items of the stack's work-queue table
 * (infra/constructs/queue.ts): the table is already there, on demand, and every API function
 * already reaches it, so a shared rate limit needs no new resource.
 *
 * One item per bucket:
 *
 *   pk     = rate/<bucket key>    (the only items under `rate/`; the IAM grant of read-only
 *   sk     = bucket                functions is confined to them with dynamodb:LeadingKeys)
 *   tokens = tokens left as of `at`, a decimal
 *   at     = epoch milliseconds of the last take
 *   v      = a counter: every write is conditional on the `v` it read, so two containers that
 *            read the same state cannot both spend it; the loser re-reads and tries again
 *   ttl    = epoch seconds after which the bucket would be full again anyway, so DynamoDB may
 *            delete it (a deleted bucket comes back full: the same thing)
 *
 * A take is one conditional UpdateItem in the common case: the adapter remembers the state it
 * last wrote for each bucket and writes against it; only a lost race costs a read (the state
 * comes back with the refusal on DynamoDB, or from a consistent GetItem where it does not).
 */
import { type AttributeValue, ConditionalCheckFailedException, type DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { type Rate, type RateBucketStore, refilled, type TakenTokens } from '../../ports/rate-buckets.js';

export { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The sort key of every bucket item, and the prefix of their partition keys (the IAM grant names it). */
export const RATE_BUCKET_SORT_KEY = 'bucket';
export const RATE_BUCKET_PREFIX = 'rate/';

/** Lost races before a take gives up (and the limiter falls back to its own bucket). */
const ATTEMPTS = 16;
/** States remembered, least recently used dropped; a forgotten one costs one failed write. */
const MAX_KNOWN = 10_000;

interface Known {
  tokens: number;
  at: number;
  v: number;
}

export interface DynamoRateBucketsOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

export class DynamoRateBuckets implements RateBucketStore {
  readonly #known = new Map<string, Known>();

  constructor(private readonly options: DynamoRateBucketsOptions) {}

  async take(key: string, rate: Rate, want: number, nowMs: number): Promise<TakenTokens> {
    // Never seen here: assume the bucket is absent (write with attribute_not_exists); a lost race tells.
    let known = this.#known.get(key);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const now = refilled(known ? { tokens: known.tokens, at: known.at } : undefined, rate, nowMs);
      const granted = Math.max(0, Math.min(want, Math.floor(now.tokens)));
      // Nothing to take: the shared bucket is empty (others only ever take more), so no write.
      if (granted === 0 && known) return { granted: 0, left: now.tokens };
      const next: Known = { tokens: now.tokens - granted, at: now.at, v: (known?.v ?? 0) + 1 };
      try {
        await this.#write(key, next, known, rate);
        this.#remember(key, next);
        return { granted, left: next.tokens };
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        known = stateOf((err as { Item?: Record<string, AttributeValue> }).Item) ?? (await this.#read(key));
        // A bucket deleted by its TTL between our write and our read: start it again, full.
        if (!known) this.#known.delete(key);
      }
    }
    throw new Error(`rate bucket ${key}: ${ATTEMPTS} conditional writes in a row lost their race`);
  }

  async #write(key: string, next: Known, expected: Known | undefined, rate: Rate): Promise<void> {
    const fullInSeconds = rate.perSecond > 0 ? rate.burst / rate.perSecond : 0;
    await this.options.client.send(
      new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: this.#key(key),
        UpdateExpression: 'SET tokens = :tokens, #at = :at, v = :v, #ttl = :ttl',
        ConditionExpression: expected ? 'v = :expected' : 'attribute_not_exists(pk)',
        ExpressionAttributeNames: { '#at': 'at', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':tokens': { N: String(next.tokens) },
          ':at': { N: String(next.at) },
          ':v': { N: String(next.v) },
          ':ttl': { N: String(Math.ceil(next.at / 1000 + fullInSeconds + 60)) },
          ...(expected ? { ':expected': { N: String(expected.v) } } : {}),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  }

  async #read(key: string): Promise<Known | undefined> {
    const { Item } = await this.options.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: this.#key(key), ConsistentRead: true }),
    );
    return stateOf(Item);
  }

  #key(key: string): Record<string, AttributeValue> {
    return { pk: { S: `${RATE_BUCKET_PREFIX}${key}` }, sk: { S: RATE_BUCKET_SORT_KEY } };
  }

  #remember(key: string, state: Known): void {
    this.#known.delete(key);
    this.#known.set(key, state);
    if (this.#known.size > MAX_KNOWN) this.#known.delete(this.#known.keys().next().value as string);
  }
}

function isConditionFailure(err: unknown): boolean {
  return err instanceof ConditionalCheckFailedException || (err as { name?: string }).name === 'ConditionalCheckFailedException';
}

function stateOf(item: Record<string, AttributeValue> | undefined): Known | undefined {
  if (!item?.v?.N || !item.tokens?.N || !item.at?.N) return undefined;
  return { tokens: Number(item.tokens.N), at: Number(item.at.N), v: Number(item.v.N) };
}
