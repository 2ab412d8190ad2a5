// zod/mini: the same validation as zod's full API at a fraction of the size; this module is the
// only zod user and sits in the metadata Lambda, whose bundle it was nearly half of.
import * as z from 'zod/mini';
import { totalmem } from 'node:os';
import { DEFAULT_COMMIT_DEADLINE_MS } from './deadline.js';
import { DEFAULT_REQUEST_LIMITS } from './http/limits.js';

/** Default RASK_IDEMPOTENCY_TTL_SECONDS: a day, the IETF draft's example and longer than any client retries. */
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/** Default RASK_JWT_MAX_AGE_SECONDS: a day, longer than any identity provider's usual session token. */
export const DEFAULT_JWT_MAX_AGE_SECONDS = 24 * 60 * 60;

/**
 * Configuration from `RASK_*` environment variables, validated once at start-up so a typo
 * fails the process with a message instead of misbehaving later. Defaults make the local
 * server work with nothing set.
 */

const integer = (min: number, max?: number) =>
  z.coerce.number({ error: 'must be a whole number' }).check(
    z.int({ error: 'must be a whole number' }),
    z.minimum(min, { error: `must be at least ${min}` }),
    ...(max === undefined ? [] : [z.maximum(max, { error: `must be at most ${max}` })]),
  );
const text = (minLength = 1) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be text') })
    .check(z.minLength(minLength, { error: minLength === 1 ? 'must not be empty' : `must be at least ${minLength} characters` }));
const withDefault = <T extends z.ZodMiniType>(schema: T, value: z.output<T>) => z._default(schema, value as never);

const port = integer(0, 65535);
const bytes = integer(1024);
const bool = z.pipe(
  z.enum(['true', 'false'], { error: 'must be true or false' }),
  z.transform((v: 'true' | 'false') => v === 'true'),
);

/** Lambda's synchronous payload cap is 6 MB including base64 overhead. */
export const DEFAULT_MAX_BODY_BYTES = 6 * 1024 * 1024;

/**
 * Largest QueryTable answer. Lambda returns at most 6 MB, and a binary answer travels base64
 * encoded (4/3 larger) inside the proxy response, so about 4.5 MB of Arrow fits; 4 MiB leaves
 * room for the envelope and headers.
 */
export const DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024;

/**
 * Largest table on which CreateTableIndex builds a vector index inside the request: measured
 * builds (docs/index-builds.md) cross API Gateway's 29 s well above this row count.
 */
export const DEFAULT_MAX_SYNC_VECTOR_INDEX_ROWS = 20_000;

// ---- Memory budgets (issue #36; docs/data-plane.md, "Memory") ----

/**
 * The LanceDB caches' budgets, MiB: one session per process (lib/adapters/lance/session.ts) holds every
 * table's index and metadata cache entries. Absent variables take defaults from the memory the
 * process may use (lanceCacheBudgets).
 */
const lanceCaches = {
  RASK_LANCE_INDEX_CACHE_MB: z.optional(integer(1, 1 << 20)),
  RASK_LANCE_METADATA_CACHE_MB: z.optional(integer(1, 1 << 20)),
};

export interface LanceCacheBudgets {
  readonly indexBytes: number;
  readonly metadataBytes: number;
  /** Where the defaults came from: `lambda` (function memory), `machine`, or `configured`. */
  readonly basis: 'lambda' | 'machine' | 'configured';
  /** The memory the defaults are a share of, bytes. */
  readonly memoryBytes: number;
}

const MIB = 1024 * 1024;
/** The caches' share of the memory the process may use: a quarter… */
export const LANCE_CACHE_SHARE = 1 / 4;
/** …of which a quarter is metadata (manifests, file footers), the rest index partitions. */
export const LANCE_METADATA_SHARE = 1 / 4;
/**
 * Locally the machine is shared with everything else on it (editors, browsers, other servers) and
 * tables are development-sized: a quarter of it, at most this.
 */
export const LOCAL_LANCE_CACHE_CAP_BYTES = 256 * MIB;
/**
 * What a process needs besides the caches when idle: Node, V8's heap, the LanceDB native module
 * (~190 MB mapped), Arrow and the AWS SDK. Measured locally at ~300 MB RSS under load.
 */
export const RUNTIME_BASELINE_BYTES = 384 * MIB;
/**
 * Copies of the largest request and answer alive at once while one is served: a body (buffer,
 * base64 text on Lambda, decoded Arrow) and an answer (Arrow batches, the IPC file, base64 text).
 */
export const ANSWER_COPIES = 4;

/** Bytes one request may hold at its peak beyond the caches: its body and its answer, copied. */
export function largestAnswerBytes(limits: { RASK_MAX_BODY_BYTES: number; RASK_MAX_RESULT_BYTES: number }): number {
  return ANSWER_COPIES * (limits.RASK_MAX_BODY_BYTES + limits.RASK_MAX_RESULT_BYTES);
}

/**
 * The budgets: configured values win; otherwise a fixed share of the function's memory on Lambda
 * (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, which Lambda itself sets) or of the machine's (the cgroup's
 * limit when lower), capped locally. Either way the share never eats into the runtime's baseline
 * and the largest answer the data plane allows (docs/data-plane.md, "Memory").
 */
export function lanceCacheBudgets(
  config: { RASK_LANCE_INDEX_CACHE_MB?: number; RASK_LANCE_METADATA_CACHE_MB?: number; RASK_MAX_BODY_BYTES: number; RASK_MAX_RESULT_BYTES: number },
  env: NodeJS.ProcessEnv = process.env,
  machine: { totalBytes: number; constrainedBytes?: number } = machineMemory(),
): LanceCacheBudgets {
  const lambdaMb = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  const onLambda = Number.isInteger(lambdaMb) && lambdaMb > 0;
  const constrained = machine.constrainedBytes && machine.constrainedBytes > 0 ? machine.constrainedBytes : Infinity;
  const memoryBytes = onLambda ? lambdaMb * MIB : Math.min(machine.totalBytes, constrained);
  let total = memoryBytes * LANCE_CACHE_SHARE;
  if (!onLambda) total = Math.min(total, LOCAL_LANCE_CACHE_CAP_BYTES);
  total = Math.min(total, memoryBytes - RUNTIME_BASELINE_BYTES - largestAnswerBytes(config));
  // A function too small for the share still gets a working cache: 16 MiB, 4 of them metadata.
  total = Math.max(total, 16 * MIB);
  const metadataDefault = Math.floor((total * LANCE_METADATA_SHARE) / MIB) * MIB;
  const indexDefault = Math.floor(total / MIB) * MIB - metadataDefault;
  const configured = config.RASK_LANCE_INDEX_CACHE_MB !== undefined || config.RASK_LANCE_METADATA_CACHE_MB !== undefined;
  return {
    indexBytes: config.RASK_LANCE_INDEX_CACHE_MB !== undefined ? config.RASK_LANCE_INDEX_CACHE_MB * MIB : indexDefault,
    metadataBytes: config.RASK_LANCE_METADATA_CACHE_MB !== undefined ? config.RASK_LANCE_METADATA_CACHE_MB * MIB : metadataDefault,
    basis: configured ? 'configured' : onLambda ? 'lambda' : 'machine',
    memoryBytes,
  };
}

function machineMemory(): { totalBytes: number; constrainedBytes?: number } {
  // process.constrainedMemory: the cgroup's limit (Node ≥ 19.6); absent or 0 without one.
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.();
  return { totalBytes: totalmem(), constrainedBytes: constrained };
}

/** The budgets from the environment alone, for processes that never load the whole config (lib/adapters/lance/session.ts). */
export function lanceCacheBudgetsFromEnv(env: NodeJS.ProcessEnv = process.env): LanceCacheBudgets {
  return lanceCacheBudgets(parse(z.object({ ...lanceCaches, RASK_MAX_BODY_BYTES: common.RASK_MAX_BODY_BYTES, RASK_MAX_RESULT_BYTES: common.RASK_MAX_RESULT_BYTES }), env), env);
}

/**
 * glibc's allocator settings for every process that runs LanceDB: the functions' environment
 * (infra/constructs/functions.ts), the task tier's, and locally what the server asks for at start-up.
 * The dynamic loader reads them when the process starts, so a process cannot set them for itself.
 * - `MALLOC_ARENA_MAX=2`: two arenas, not 8 per core; LanceDB's threads otherwise keep memory freed
 *   in one arena from being reused by another.
 * - a fixed `mmap_threshold` of 64 KiB: glibc otherwise raises the threshold after each large free
 *   (up to 32 MiB), so a renewed session's large blocks land on the heap, where the fragments left
 *   between them are never handed back; fixed, blocks from 64 KiB up are mapped and unmapped whole.
 *   Measured over 4 renewals: RSS stopped rising after the third instead of stepping up at each one;
 *   fixed at glibc's starting value, 128 KiB, it still stepped (docs/benchmarks.md, "The allocator's
 *   threshold"; issue #36).
 */
export const NATIVE_ALLOCATOR_ENV: Readonly<Record<'MALLOC_ARENA_MAX' | 'GLIBC_TUNABLES', string>> = {
  MALLOC_ARENA_MAX: '2',
  GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536',
};

/** The allocator settings this process started without (empty when all are set as NATIVE_ALLOCATOR_ENV says). */
export function missingAllocatorSettings(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(NATIVE_ALLOCATOR_ENV)
    .filter(([k, v]) => env[k] !== v)
    .map(([k, v]) => `${k}=${v}`);
}

// ---- end of memory budgets ----

/** The change feed's retention: a cursor stays valid this many days (docs/events.md). */
export const DEFAULT_CHANGES_RETENTION_DAYS = 30;

/**
 * How old a manifest must be before the AWS relay judges it: the change log's settle window
 * (15 s, lib/adapters/aws/object-change-log.ts) plus a door's time from its commit to its append,
 * with room. A catalog commit's event must be readable before its manifest is judged. The relay's
 * notification queue holds every notification this long (infra/constructs/change-relay.ts).
 */
export const AWS_RELAY_SETTLE_MS = 30_000;

const logLevel = z.enum(['debug', 'info', 'warn', 'error', 'silent'], { error: 'must be debug, info, warn, error or silent' });

const common = {
  /** Log threshold for every entry point (lib/observability/logger.ts). */
  RASK_LOG_LEVEL: withDefault(logLevel, 'info'),
  RASK_MAX_BODY_BYTES: withDefault(bytes, DEFAULT_MAX_BODY_BYTES),
  RASK_MAX_RESULT_BYTES: withDefault(bytes, DEFAULT_MAX_RESULT_BYTES),
  RASK_MAX_SYNC_VECTOR_INDEX_ROWS: withDefault(integer(0), DEFAULT_MAX_SYNC_VECTOR_INDEX_ROWS),
  RASK_MANAGED_VERSIONING: withDefault(bool, true),
  RASK_TRASH_GRACE_DAYS: withDefault(integer(0), 0),
  /** Days the change feed keeps an event, and a cursor stays valid (docs/events.md, "Retention"). */
  RASK_CHANGES_RETENTION_DAYS: withDefault(integer(1, 3650), DEFAULT_CHANGES_RETENTION_DAYS),
  RASK_PROJECT: withDefault(text(), 'default'),
  RASK_WAREHOUSE: withDefault(text(), 'default'),
  /** How long a request may wait to commit (registry retries, queued writers); lib/deadline.ts. */
  RASK_COMMIT_DEADLINE_MS: withDefault(integer(100, 28_000), DEFAULT_COMMIT_DEADLINE_MS),
  /** OIDC bearer tokens (docs/governance.md): all three are needed for RASK_AUTH=jwt / on AWS. */
  RASK_JWT_ISSUER: z.optional(text()),
  RASK_JWT_AUDIENCE: z.optional(text()),
  RASK_JWT_JWKS_URL: z.optional(z.url({ error: 'must be a URL' })),
  RASK_JWT_PRINCIPAL_CLAIM: withDefault(text(), 'sub'),
  // --- names and limits (lib/http/limits.ts, docs/governance.md) ---
  /** Deepest `[`/`{` nesting of a JSON body, checked before it is parsed. */
  RASK_MAX_JSON_DEPTH: withDefault(integer(8, 10_000), DEFAULT_REQUEST_LIMITS.maxJsonDepth),
  /** Most bytes (keys and values, UTF-8) of one `properties` map. */
  RASK_MAX_PROPERTIES_BYTES: withDefault(integer(256), DEFAULT_REQUEST_LIMITS.maxPropertiesBytes),
  /** Most entries of one `properties` map. */
  RASK_MAX_PROPERTIES: withDefault(integer(1), DEFAULT_REQUEST_LIMITS.maxProperties),
  // ---- Token lifetimes (lib/governance/jwt.ts; docs/governance.md, "Token rules")
  /** Oldest accepted OIDC token by its `iat`; tokens must also carry `exp`. */
  RASK_JWT_MAX_AGE_SECONDS: withDefault(integer(60, 30 * 24 * 60 * 60), DEFAULT_JWT_MAX_AGE_SECONDS),
  // ---- end of token lifetimes
  // --- Storage allotment (docs/governance.md, "Storage allotment"; issue 24) ---
  /**
   * The storage projects' warehouses may use: comma-separated roots (absolute directories locally,
   * s3://bucket/prefix on AWS), parsed by lib/app/storage.ts. Project P is allotted `<root>/<P>/`
   * in each. Absent: `<RASK_DATA_DIR>/projects` locally, `<warehouse bucket and prefix>projects/` on AWS.
   */
  RASK_STORAGE_ROOTS: z.optional(text()),
  /**
   * How long the answer of a write sent with an Idempotency-Key is kept for its retries
   * (lib/http/idempotency.ts; docs/operations.md, "Idempotency keys"): a minute to 30 days.
   */
  /**
   * Request rates (lib/http/rate-limit.ts; docs/operations.md, "Rate limits"): steady requests
   * per second per principal and per project, 0 = off (the default), and the bursts (default
   * twice the rate). Over either: 429 / code 21 with Retry-After.
   */
  RASK_RATE_PRINCIPAL_PER_SECOND: withDefault(integer(0, 100_000), 0),
  RASK_RATE_PRINCIPAL_BURST: z.optional(integer(1, 1_000_000)),
  RASK_RATE_PROJECT_PER_SECOND: withDefault(integer(0, 100_000), 0),
  RASK_RATE_PROJECT_BURST: z.optional(integer(1, 1_000_000)),
  /**
   * Object quotas per project (lib/catalog/quotas.ts; docs/operations.md, "Object quotas"):
   * namespaces and tables a project may hold, 0 = no quota (the default). A platform
   * administrator sets a project's own through POST /v1/limits.
   */
  RASK_QUOTA_NAMESPACES: withDefault(integer(0, 100_000_000), 0),
  RASK_QUOTA_TABLES: withDefault(integer(0, 100_000_000), 0),
  /**
   * Credential quotas (lib/catalog/control/principal-quotas.ts): principals per deployment and
   * unrevoked API keys per principal, 0 = no quota (the default). A platform administrator sets a
   * principal's own keys quota through POST /v1/principals/{principal}/limits.
   */
  RASK_QUOTA_PRINCIPALS: withDefault(integer(0, 100_000_000), 0),
  RASK_QUOTA_KEYS_PER_PRINCIPAL: withDefault(integer(0, 100_000_000), 0),
  RASK_IDEMPOTENCY_TTL_SECONDS: withDefault(integer(60, 30 * 24 * 60 * 60), DEFAULT_IDEMPOTENCY_TTL_SECONDS),
  ...lanceCaches,
};

/** The request rates from the configuration (local and AWS alike); a burst defaults to twice its rate. */
export const rateLimitsOf = (config: {
  RASK_RATE_PRINCIPAL_PER_SECOND: number;
  RASK_RATE_PRINCIPAL_BURST?: number;
  RASK_RATE_PROJECT_PER_SECOND: number;
  RASK_RATE_PROJECT_BURST?: number;
}) => ({
  principal: { perSecond: config.RASK_RATE_PRINCIPAL_PER_SECOND, burst: config.RASK_RATE_PRINCIPAL_BURST ?? Math.max(1, 2 * config.RASK_RATE_PRINCIPAL_PER_SECOND) },
  project: { perSecond: config.RASK_RATE_PROJECT_PER_SECOND, burst: config.RASK_RATE_PROJECT_BURST ?? Math.max(1, 2 * config.RASK_RATE_PROJECT_PER_SECOND) },
});

/** The deployment's object quotas per project (local and AWS alike). */
export const quotaDefaultsOf = (config: { RASK_QUOTA_NAMESPACES: number; RASK_QUOTA_TABLES: number }) => ({
  namespaces: config.RASK_QUOTA_NAMESPACES,
  tables: config.RASK_QUOTA_TABLES,
});

/** The deployment's credential quotas (local and AWS alike). */
export const credentialQuotasOf = (config: { RASK_QUOTA_PRINCIPALS: number; RASK_QUOTA_KEYS_PER_PRINCIPAL: number }) => ({
  principals: config.RASK_QUOTA_PRINCIPALS,
  keysPerPrincipal: config.RASK_QUOTA_KEYS_PER_PRINCIPAL,
});

/** The router's request limits from the configuration (local and AWS alike). */
export const requestLimitsOf = (config: {
  RASK_MAX_JSON_DEPTH: number;
  RASK_MAX_PROPERTIES_BYTES: number;
  RASK_MAX_PROPERTIES: number;
}) => ({
  maxJsonDepth: config.RASK_MAX_JSON_DEPTH,
  maxPropertiesBytes: config.RASK_MAX_PROPERTIES_BYTES,
  maxProperties: config.RASK_MAX_PROPERTIES,
});

/** How often the local server's in-process worker looks for queued jobs (docs/jobs.md). */
export const DEFAULT_JOBS_INTERVAL_MS = 2000;

/**
 * Local cadences of the maintenance passes (docs/maintenance.md); 0 disables a pass. On AWS each
 * pass has its own EventBridge rule instead.
 */
export const DEFAULT_MAINTENANCE_INTERVALS_MS = {
  sweep: 60 * 60_000,
  index: 5 * 60_000,
  reconcile: 15 * 60_000,
  orphans: 24 * 60 * 60_000,
} as const;

/**
 * The longest a client we serve keeps an idle connection for reuse: the official LanceDB client's
 * pool (`poolIdleTimeout`, 300 s by default; its namespace client's 90 s is shorter). A server
 * that closes an idle connection first races the client reusing it: the request meets a reset
 * (`os error 104`, seen in the memory soak, docs/benchmarks.md). So the server waits longer than
 * the client, and the client is the one that closes. The headers timeout need not follow: on
 * Node 20 it runs only while a request's headers are arriving, not while a kept-alive connection
 * is idle (test/e2e/server-limits.test.ts).
 */
export const CLIENT_POOL_IDLE_MS = 300_000;

/**
 * The local server's connection limits (lib/app/server.ts): a client that never finishes its
 * headers or body is cut off, idle keep-alive sockets close, and buffered request bodies are
 * bounded as a whole, so slow or greedy clients cannot exhaust file descriptors or memory.
 */
export const DEFAULT_SERVER_LIMITS = {
  RASK_HEADERS_TIMEOUT_MS: 10_000,
  RASK_REQUEST_TIMEOUT_MS: 60_000,
  RASK_KEEP_ALIVE_TIMEOUT_MS: CLIENT_POOL_IDLE_MS + 10_000,
  RASK_MAX_CONNECTIONS: 1024,
  RASK_MAX_INFLIGHT_BODY_BYTES: 64 * 1024 * 1024,
} as const;

const serverLimits = {
  /** Time to receive a request's headers. */
  RASK_HEADERS_TIMEOUT_MS: withDefault(integer(100), DEFAULT_SERVER_LIMITS.RASK_HEADERS_TIMEOUT_MS),
  /** Time to receive a whole request (headers and body); the answer may take longer. */
  RASK_REQUEST_TIMEOUT_MS: withDefault(integer(100), DEFAULT_SERVER_LIMITS.RASK_REQUEST_TIMEOUT_MS),
  /** How long an idle keep-alive connection stays open: longer than clients keep theirs (CLIENT_POOL_IDLE_MS). */
  RASK_KEEP_ALIVE_TIMEOUT_MS: withDefault(integer(100), DEFAULT_SERVER_LIMITS.RASK_KEEP_ALIVE_TIMEOUT_MS),
  /** Open connections at most; more are refused by the socket layer. */
  RASK_MAX_CONNECTIONS: withDefault(integer(1), DEFAULT_SERVER_LIMITS.RASK_MAX_CONNECTIONS),
  /** Request-body bytes buffered across all requests at once; beyond it 503 / code 17 with Retry-After. */
  RASK_MAX_INFLIGHT_BODY_BYTES: withDefault(bytes, DEFAULT_SERVER_LIMITS.RASK_MAX_INFLIGHT_BODY_BYTES),
};


// ---- Drive-by protection of the local server (lib/http/local-gate.ts; docs/governance.md,
// "Threat model of the local server"). Comma-separated lists; empty or unset = none.
const commaList = (valid: (item: string) => boolean, error: string) =>
  z.pipe(
    z.string().check(z.refine((v: string) => splitList(v).every(valid), { error })),
    z.transform((v: string) => splitList(v)),
  );
const splitList = (v: string) => v.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
/** `scheme://host[:port]` exactly: what a browser sends as Origin. */
const isOrigin = (v: string) => {
  try {
    const url = new URL(v);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === v.toLowerCase();
  } catch {
    return false;
  }
};
const isHostName = (v: string) => /^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(v);
const driveBy = {
  /** Browser origins (besides the server's own) that may call the API, with CORS. */
  RASK_ALLOWED_ORIGINS: withDefault(commaList(isOrigin, 'must be a comma-separated list of origins like http://localhost:3000'), []),
  /** Host names (besides localhost, IP addresses and RASK_HOST) the server answers to: `name` or `name:port`. */
  RASK_ALLOWED_HOSTS: withDefault(commaList(isHostName, 'must be a comma-separated list of host names, each optionally with :port'), []),
};
// ---- end of drive-by protection

const localSchema = z.object({
  RASK_HOST: withDefault(text(), '127.0.0.1'),
  RASK_PORT: withDefault(port, 2333),
  RASK_DATA_DIR: withDefault(text(), './.rask'),
  /** Milliseconds between passes of the in-process job worker; 0 disables it. */
  RASK_JOBS_INTERVAL_MS: withDefault(integer(0), DEFAULT_JOBS_INTERVAL_MS),
  /** Milliseconds between local maintenance passes; 0 disables that pass (lib/maintenance/timers.ts). */
  RASK_SWEEP_INTERVAL_MS: withDefault(integer(0), DEFAULT_MAINTENANCE_INTERVALS_MS.sweep),
  RASK_INDEX_INTERVAL_MS: withDefault(integer(0), DEFAULT_MAINTENANCE_INTERVALS_MS.index),
  RASK_RECONCILE_INTERVAL_MS: withDefault(integer(0), DEFAULT_MAINTENANCE_INTERVALS_MS.reconcile),
  RASK_ORPHANS_INTERVAL_MS: withDefault(integer(0), DEFAULT_MAINTENANCE_INTERVALS_MS.orphans),
  /** Milliseconds between scans for commits made straight to storage (lib/maintenance/change-relay.ts); 0 disables them. */
  RASK_CHANGES_SCAN_INTERVAL_MS: withDefault(integer(0), 30_000),
  /** How old a manifest must be before the scan judges it (longer than a door takes from its commit to its event). */
  RASK_CHANGES_SETTLE_MS: withDefault(integer(0), 5_000),
  ...serverLimits,
  ...driveBy,
  /** Also print each change event on stdout (they are always appended to events/ in the data directory). */
  RASK_EVENTS_STDOUT: withDefault(bool, false),
  /**
   * Days the registry journal keeps history for `rask registry restore --at` and `inspect
   * --history` (lib/adapters/local/registry-journal.ts); 0 turns the journal off.
   */
  RASK_REGISTRY_HISTORY_DAYS: withDefault(integer(0, 3650), 7),
  /** off (default, with a start-up warning), keys (API keys) or jwt (API keys and OIDC tokens). */
  RASK_AUTH: withDefault(z.enum(['off', 'keys', 'jwt'], { error: 'must be off, keys or jwt' }), 'off'),
  /** The bootstrap admin key; absent with auth on: one is generated at first start and printed once. */
  RASK_ADMIN_KEY: z.optional(text(16)),
  /** `pretty`: one human line per entry; `json`: the same structured lines as on Lambda. */
  RASK_LOG_FORMAT: withDefault(z.enum(['pretty', 'json'], { error: 'must be pretty or json' }), 'pretty'),
  /** Milliseconds between `memory` log lines (RSS, heap, LanceDB cache use; docs/operations.md); 0: none. */
  RASK_MEMORY_STATS_MS: withDefault(integer(0), 0),
  /**
   * The local task tier (docs/jobs.md, "Tiers"): `child` runs each task-tier job in a child
   * process of the server (functions/job-task.ts), `off` runs every job in the server's loop.
   */
  RASK_JOBS_TASK_TIER: withDefault(z.enum(['child', 'off'], { error: 'must be child or off' }), 'child'),
  /** At most this many task-tier jobs at once (children locally, Fargate tasks on AWS). */
  RASK_JOBS_TASK_CONCURRENCY: withDefault(integer(1, 1000), 2),
  /** A stopped (canceled) child's grace between SIGTERM and SIGKILL: Fargate's stopTimeout, 30 s. */
  RASK_JOBS_TASK_STOP_GRACE_MS: withDefault(integer(0), 30_000),
  /**
   * Routing by estimate at enqueue (docs/jobs.md, "Routing"): a vector index build above this
   * many cost-rows (rows of a 128-d IVF_PQ build), a backfill and a maintenance sweep above their
   * byte budgets, start on the task tier. Absent: the measured defaults (lib/queue/tiers.ts,
   * DEFAULT_TIER_LIMITS).
   */
  RASK_JOBS_TASK_INDEX_COST_ROWS: z.optional(integer(1)),
  RASK_JOBS_TASK_BACKFILL_BYTES: z.optional(integer(1)),
  RASK_JOBS_TASK_SWEEP_BYTES: z.optional(integer(1)),
  /** A job's lease and its renewal period (docs/jobs.md, the policy table); the crash tests shorten them. */
  RASK_JOBS_LEASE_MS: withDefault(integer(1000), 120_000),
  RASK_JOBS_HEARTBEAT_MS: withDefault(integer(100), 20_000),
  ...common,
});

// --- S3 client budgets (issue #35): lib/adapters/aws/s3-client.ts, docs/deploy.md "S3 budgets" ---

/** Defaults of the RASK_S3_* settings; the arithmetic that makes them fit a door's deadline is in docs/deploy.md. */
export const DEFAULT_S3_SETTINGS = {
  RASK_S3_RETRY_MODE: 'standard',
  RASK_S3_MAX_ATTEMPTS: 3,
  RASK_S3_CONNECTION_TIMEOUT_MS: 1_000,
  RASK_S3_REQUEST_TIMEOUT_MS: 5_000,
  RASK_S3_CONFLICT_ATTEMPTS: 4,
} as const;

const s3Settings = {
  /** The SDK's retry mode (replaces AWS_RETRY_MODE, which the client then ignores). */
  RASK_S3_RETRY_MODE: withDefault(
    z.enum(['standard', 'adaptive'], { error: 'must be standard or adaptive' }),
    DEFAULT_S3_SETTINGS.RASK_S3_RETRY_MODE,
  ),
  /** Attempts per S3 request, the first included; 1 = no SDK retries (replaces AWS_MAX_ATTEMPTS). */
  RASK_S3_MAX_ATTEMPTS: withDefault(integer(1, 10), DEFAULT_S3_SETTINGS.RASK_S3_MAX_ATTEMPTS),
  /** Milliseconds to connect to S3 before an attempt fails. */
  RASK_S3_CONNECTION_TIMEOUT_MS: withDefault(integer(100, 10_000), DEFAULT_S3_SETTINGS.RASK_S3_CONNECTION_TIMEOUT_MS),
  /** Milliseconds one attempt (request and response) may take before it fails. */
  RASK_S3_REQUEST_TIMEOUT_MS: withDefault(integer(100, 28_000), DEFAULT_S3_SETTINGS.RASK_S3_REQUEST_TIMEOUT_MS),
  /** Tries of a conditional write that S3 answers 409 ConditionalRequestConflict (our own retries, not the SDK's). */
  RASK_S3_CONFLICT_ATTEMPTS: withDefault(integer(1, 10), DEFAULT_S3_SETTINGS.RASK_S3_CONFLICT_ATTEMPTS),
};

// --- end of S3 client budgets ---

const awsSchema = z.object({
  RASK_REGISTRY_BUCKET: text(3),
  RASK_REGISTRY_PREFIX: withDefault(z.string(), 'registry/'),
  RASK_WAREHOUSE_BUCKET: text(3),
  RASK_WAREHOUSE_PREFIX: withDefault(z.string(), 'warehouse/'),
  AWS_REGION: z.optional(text()),
  /** The role vended credentials derive from; absent = vend nothing (storage_options omitted). */
  RASK_VENDING_ROLE_ARN: z.optional(
    z.string().check(z.regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/, { error: 'must be an IAM role ARN' })),
  ),
  /**
   * The data function, which the metadata function invokes for DescribeTable with
   * `load_detailed_metadata` (it cannot open datasets itself); absent = that flag answers code 0.
   */
  RASK_DATA_FUNCTION_NAME: z.optional(text()),
  /** The EventBridge bus the change relay puts change events on (docs/events.md, "The relay"); absent = the log only. */
  RASK_EVENT_BUS_NAME: z.optional(text()),
  /** The stack's DynamoDB work-queue table; absent = jobs live in the registry (lib/queue/store.ts). */
  RASK_WORK_QUEUE_TABLE: z.optional(text(3)),
  /**
   * Set by the per-operation deployment on the functions of read operations, whose roles may not
   * write: read paths then answer without repairing what they meet (docs/protocols.md).
   */
  RASK_READ_ONLY: withDefault(bool, false),
  /**
   * The job task tier on ECS Fargate (docs/jobs.md, "Tiers"; infra/constructs/job-tasks.ts sets
   * them): absent cluster = no task tier, every job runs on the Jobs function.
   */
  RASK_JOBS_TASK_CLUSTER: z.optional(text(1)),
  RASK_JOBS_TASK_DEFINITION: z.optional(text(1)),
  RASK_JOBS_TASK_CONTAINER: withDefault(text(1), 'worker'),
  RASK_JOBS_TASK_SUBNETS: withDefault(commaList((v) => /^subnet-[0-9a-f]+$/.test(v), 'must be a comma-separated list of subnet ids'), []),
  RASK_JOBS_TASK_SECURITY_GROUPS: withDefault(commaList((v) => /^sg-[0-9a-f]+$/.test(v), 'must be a comma-separated list of security group ids'), []),
  RASK_JOBS_TASK_PUBLIC_IP: withDefault(bool, true),
  RASK_JOBS_TASK_CONCURRENCY: withDefault(integer(1, 1000), 4),
  /**
   * Routing by estimate at enqueue (docs/jobs.md, "Routing"): a vector index build above this
   * many cost-rows (rows of a 128-d IVF_PQ build), a backfill and a maintenance sweep above their
   * byte budgets, start on the task tier. Absent: the measured defaults (lib/queue/tiers.ts,
   * DEFAULT_TIER_LIMITS).
   */
  RASK_JOBS_TASK_INDEX_COST_ROWS: z.optional(integer(1)),
  RASK_JOBS_TASK_BACKFILL_BYTES: z.optional(integer(1)),
  RASK_JOBS_TASK_SWEEP_BYTES: z.optional(integer(1)),
  ...s3Settings,
  ...common,
});

/**
 * The scheduled maintenance functions (functions/maintenance-*.ts): the AWS configuration and the
 * switches infra/constructs/maintenance.ts sets on the two passes that may change things.
 */
const maintenanceSchema = z.extend(awsSchema, {
  /** Reconcile runs each door's repair path for what it finds (its role may then write). */
  RASK_RECONCILE_REPAIR: withDefault(bool, false),
  /** The orphan scan deletes what it finds, re-checking each first (its role may then delete). */
  RASK_ORPHANS_DELETE: withDefault(bool, false),
  /**
   * The change relay (functions/change-relay.ts): S3 Event Notifications of the change log take
   * its entries to the bus (infra/constructs/change-relay.ts sets it with the rule that delivers
   * them), so the scheduled scan publishes nothing itself; off, the scan is the bus leg.
   */
  RASK_CHANGE_NOTIFICATIONS: withDefault(bool, false),
});

export type LocalConfig = z.infer<typeof localSchema>;
export type AwsConfig = z.infer<typeof awsSchema>;
export type MaintenanceConfig = z.infer<typeof maintenanceSchema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function parse<T extends z.ZodMiniType>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  throw new ConfigError(`invalid configuration: ${problems}`);
}

export function loadLocalConfig(env: NodeJS.ProcessEnv = process.env): LocalConfig {
  const config = parse(localSchema, env);
  // node:http refuses a headers timeout longer than the whole-request timeout.
  if (config.RASK_HEADERS_TIMEOUT_MS > config.RASK_REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      `invalid configuration: RASK_HEADERS_TIMEOUT_MS (${config.RASK_HEADERS_TIMEOUT_MS}) must not exceed RASK_REQUEST_TIMEOUT_MS (${config.RASK_REQUEST_TIMEOUT_MS})`,
    );
  }
  // Off by default only where nothing but this machine can connect (docs/governance.md, "Threat
  // model of the local server"): serving a network without authentication must be asked for.
  if (env.RASK_AUTH === undefined && !isLoopback(config.RASK_HOST)) {
    throw new ConfigError(
      `invalid configuration: RASK_HOST=${config.RASK_HOST} accepts connections from other machines and RASK_AUTH is not set: set RASK_AUTH=keys (or jwt), or RASK_AUTH=off to serve them without authentication`,
    );
  }
  return config;
}

/** A host only this machine reaches: localhost, 127.0.0.0/8 or ::1. */
const isLoopback = (host: string) => /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i.test(host);
export const loadAwsConfig = (env: NodeJS.ProcessEnv = process.env): AwsConfig => parse(awsSchema, env);
export const loadMaintenanceConfig = (env: NodeJS.ProcessEnv = process.env): MaintenanceConfig => parse(maintenanceSchema, env);

/**
 * `RASK_*` variables the local server does not read: a misspelled `RASK_PROT` would otherwise be
 * silently ignored. Each comes with the closest known name when one is near.
 */
export function unknownLocalVariables(env: NodeJS.ProcessEnv = process.env): { name: string; suggestion?: string }[] {
  const known = Object.keys(localSchema.shape);
  return Object.keys(env)
    .filter((name) => name.startsWith('RASK_') && !known.includes(name))
    .sort()
    .map((name) => {
      const best = known
        .map((k) => ({ k, d: editDistance(name, k) }))
        .sort((a, b) => a.d - b.d)[0];
      return best && best.d <= 3 ? { name, suggestion: best.k } : { name };
    });
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}
