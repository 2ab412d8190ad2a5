/**
 * Placed faults for the catalog's doors (issue #35): the metadata Lambda's composition
 * (createAwsApp over the stateful S3 fake) with its registry store wrapped in a double that
 * delegates every call to the real S3 store and, at the n-th call matching a rule, fails the way
 * the object-store port reports an S3 failure once the SDK's retries are spent:
 *
 * - `unavailable`: nothing was written, the port throws StorageUnavailableError (503 / 17);
 * - `applied-unavailable`: the write was applied, then the answer was lost (a timeout or reset
 *   after S3 acted): the port throws StorageUnavailableError and the outcome is unknown;
 * - `applied-then-lost`: the write was applied, its answer was lost and the retry met the first
 *   attempt's own result (S3's 412 / 404): the port throws ConditionFailedError, as a port that
 *   did not recognise its own attempt would;
 * - `interleave`: nothing fails; another request runs to its end first (a placed race);
 * - `conflict`: S3's 409 ConditionalRequestConflict reported as a lost race without anything
 *   written (what the adapter did before issue #35).
 *
 * The doors must survive each: never answer "already exists" / "not found" for their own
 * change, never release what they still need, leave nothing the next read does not settle.
 */
import { createAwsApp } from '../../lib/app/aws.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { loadAwsConfig } from '../../lib/config.js';
import { StorageUnavailableError } from '../../lib/errors.js';
import type { Router } from '../../lib/http/router.js';
import { type AdminAnswer, callAsAdmin } from './admin-call.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { ConditionFailedError, type ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import { createS3Fake, type S3Fake } from './s3-fake.js';

export type FaultKind = 'unavailable' | 'applied-unavailable' | 'applied-then-lost' | 'conflict' | 'interleave';
export type StoreOp = 'get' | 'head' | 'list' | 'putIfAbsent' | 'putIfMatch' | 'deleteIfMatch' | 'delete' | 'put';

export interface FaultRule {
  readonly op: StoreOp;
  /** Which keys the rule counts (a predicate on the key, and optionally on the body written). */
  readonly key: (key: string, body?: string) => boolean;
  /** Fail the n-th matching call (1 = the first). */
  readonly nth?: number;
  /** …and the `times - 1` matching calls after it (a fault that outlasts the door's own retries). */
  readonly times?: number;
  readonly kind: FaultKind;
  /** `interleave`: runs this (another request, say) before the call goes ahead unfaulted. */
  readonly run?: () => Promise<void>;
}

export interface FaultedStore extends ObjectStore {
  /** Arms a rule; it fires once (or `times` times in a row). */
  place(rule: FaultRule): void;
  /** Faults placed and fired so far. */
  fired(): readonly FaultRule[];
  /** Drops every rule not fired yet. */
  clear(): void;
}

const unknownOutcome = (_key: string) => new StorageUnavailableError('the object store did not answer; retry');

export function faulted(inner: ObjectStore): FaultedStore {
  const rules: { rule: FaultRule; seen: number }[] = [];
  const fired: FaultRule[] = [];
  const match = (op: StoreOp, key: string, body?: Buffer | string) => {
    const text = body === undefined ? undefined : body.toString();
    for (const entry of rules) {
      if (entry.rule.op !== op || !entry.rule.key(key, text)) continue;
      entry.seen++;
      const first = entry.rule.nth ?? 1;
      if (entry.seen >= first && entry.seen < first + (entry.rule.times ?? 1)) {
        if (entry.seen === first + (entry.rule.times ?? 1) - 1) rules.splice(rules.indexOf(entry), 1);
        fired.push(entry.rule);
        return entry.rule;
      }
    }
    return undefined;
  };
  /** A write: applied or not according to the fault, then failed as the fault says. */
  async function write<R>(op: StoreOp, key: string, body: Buffer | string | undefined, run: () => Promise<R>): Promise<R> {
    const rule = match(op, key, body);
    if (rule === undefined) return run();
    const kind = rule.kind;
    if (kind === 'interleave') {
      await rule.run?.();
      return run();
    }
    if (kind === 'unavailable') throw unknownOutcome(key);
    if (kind === 'conflict') throw new ConditionFailedError(key, 'conflict');
    await run();
    if (kind === 'applied-unavailable') throw unknownOutcome(key);
    throw new ConditionFailedError(key, op === 'putIfAbsent' ? 'exists' : op === 'putIfMatch' ? 'etag-mismatch' : 'missing');
  }
  async function read<R>(op: StoreOp, key: string, run: () => Promise<R>): Promise<R> {
    const rule = match(op, key);
    if (rule?.kind === 'interleave') await rule.run?.();
    else if (rule !== undefined) throw unknownOutcome(key);
    return run();
  }
  const store: FaultedStore = {
    url: inner.url,
    get: (key) => read('get', key, () => inner.get(key)),
    head: (key) => read('head', key, () => inner.head(key)),
    list: (options) => read('list', options.prefix ?? '', () => inner.list(options)),
    putIfAbsent: (key, body) => write('putIfAbsent', key, body, () => inner.putIfAbsent(key, body)),
    putIfMatch: (key, body, etag) => write('putIfMatch', key, body, () => inner.putIfMatch(key, body, etag)),
    deleteIfMatch: (key, etag) => write('deleteIfMatch', key, undefined, () => inner.deleteIfMatch(key, etag)),
    delete: (key) => write('delete', key, undefined, () => inner.delete(key)),
    put: (key, body) => write('put', key, body, () => inner.put(key, body)),
    copyIfAbsent: (source, key, options) => inner.copyIfAbsent(source, key, options),
    place: (rule) => void rules.push({ rule, seen: 0 }),
    fired: () => [...fired],
    clear: () => void rules.splice(0, rules.length),
  };
  if (inner.listKeys) {
    const listKeys = inner.listKeys.bind(inner);
    store.listKeys = (options) => read('list', options.prefix ?? '', () => listKeys(options));
  }
  return store;
}

export type Answer = AdminAnswer;

export interface FaultedApp {
  readonly fake: S3Fake;
  readonly services: CatalogServices;
  readonly registryStore: FaultedStore;
  call(method: 'GET' | 'POST', path: string, body?: unknown, query?: string): Promise<Answer>;
  /** Like `call`, but throws unless the answer is 200. */
  ok(method: 'GET' | 'POST', path: string, body?: unknown, query?: string): Promise<Answer['body']>;
  close(): void;
}

/**
 * The metadata Lambda's composition over a fresh S3 fake, the registry store faulted. `env`
 * adds configuration (e.g. RASK_TRASH_GRACE_DAYS).
 */
export async function faultedMetaApp(env: Record<string, string> = {}): Promise<FaultedApp> {
  const fake = createS3Fake();
  const config = loadAwsConfig({ RASK_REGISTRY_BUCKET: 'registry-bucket', RASK_WAREHOUSE_BUCKET: 'wh-bucket', AWS_REGION: 'us-east-1', ...env });
  const observe = { logger: { error: () => {}, warn: () => {} } };
  const app: { router: Router; services: CatalogServices } = await createAwsApp(config, metaHandlers, fake.client, undefined, observe);
  const registryStore = faulted(app.services.registry.store);
  // The registry's store is the port every catalog door writes through: wrap it in place.
  (app.services.registry as { store: ObjectStore }).store = registryStore;
  const call = (method: 'GET' | 'POST', path: string, body?: unknown, query = ''): Promise<Answer> => callAsAdmin(app.router, method, path, body, query);
  return {
    fake,
    services: app.services,
    registryStore,
    call,
    async ok(method, path, body, query) {
      const res = await call(method, path, body, query);
      if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body;
    },
    close: () => fake.mock.restore(),
  };
}

/** Key predicates for the registry's records of the default project (lib/registry/keys.ts). */
export const keyOf = {
  table: (id: readonly string[]) => (key: string) => key === keys.table('default', id),
  namespace: (id: readonly string[]) => (key: string) => key === keys.namespace('default', id),
  claim: () => (key: string) => key.startsWith(keys.locationClaimsPrefix('default')),
  trash: () => (key: string) => key.startsWith(keys.trashPrefix('default')),
  protection: (id: readonly string[]) => (key: string) => key === keys.protection('default', 'table', id),
};
