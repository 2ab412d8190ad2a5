import type { ObjectStore } from '../ports/object-store.js';
import { ConditionFailedError } from '../ports/object-store.js';
import { msSince, trace, tracing } from '../trace.js';

/**
 * The registry's store as a traced request sees it (docs/operations.md, "Logging"): every key
 * read, listed or written becomes a debug line with its outcome and time — the Registry's own
 * calls and the doors that use its store directly alike. Installed only at RASK_LOG_LEVEL=debug
 * (lib/app/build.ts); outside a traced request each call passes straight through.
 */
export function tracedStore(store: ObjectStore): ObjectStore {
  const timed = async <R>(message: string, fields: Record<string, unknown>, call: () => Promise<R>, outcome: (r: R) => Record<string, unknown> = () => ({ outcome: 'ok' })): Promise<R> => {
    if (!tracing()) return call();
    const started = performance.now();
    try {
      const result = await call();
      trace(message, { ...fields, ...outcome(result), ms: msSince(started) });
      return result;
    } catch (err) {
      trace(message, { ...fields, outcome: err instanceof ConditionFailedError ? 'condition failed' : 'error', ms: msSince(started) });
      throw err;
    }
  };
  const found = (r: unknown) => ({ found: r !== undefined });
  return {
    url: store.url,
    get: (key) => timed('registry read', { key }, () => store.get(key), found),
    head: (key) => timed('registry read', { key, op: 'head' }, () => store.head(key), found),
    putIfAbsent: (key, body) => timed('registry write', { op: 'create', key }, () => store.putIfAbsent(key, body)),
    putIfMatch: (key, body, etag) => timed('registry write', { op: 'replace', key }, () => store.putIfMatch(key, body, etag)),
    copyIfAbsent: (source, key, options) => timed('registry write', { op: 'copy', key, source }, () => store.copyIfAbsent(source, key, options)),
    put: (key, body) => timed('registry write', { op: 'put', key }, () => store.put(key, body)),
    deleteIfMatch: (key, etag) => timed('registry write', { op: 'remove', key }, () => store.deleteIfMatch(key, etag)),
    delete: (key) => timed('registry write', { op: 'delete', key }, () => store.delete(key)),
    list: (options) =>
      timed('registry list', { prefix: options.prefix }, () => store.list(options), (r) => ({ keys: r.objects.length + r.commonPrefixes.length, truncated: r.truncated })),
    ...(store.listKeys
      ? { listKeys: (options: Parameters<NonNullable<ObjectStore['listKeys']>>[0]) => timed('registry list', { prefix: options.prefix }, () => store.listKeys!(options), (r) => ({ keys: r.keys.length, truncated: r.truncated })) }
      : {}),
    ...(store.checkPath ? { checkPath: (path: string) => store.checkPath!(path) } : {}),
  };
}
