import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Request tracing at RASK_LOG_LEVEL=debug (docs/operations.md, "Logging"): while a request is
 * traced, deep layers (the registry, the router's steps) write debug lines carrying its request
 * id without any signature in between passing a logger. Outside a traced request every call
 * here is a no-op costing one AsyncLocalStorage lookup, so at other levels nothing changes.
 * This module imports nothing of the catalog, so any layer may use it (like signals.ts).
 */
export interface TraceSink {
  debug(message: string, fields: Record<string, unknown>): void;
}

interface Traced {
  readonly sink: TraceSink;
  readonly requestId: string;
}

const current = new AsyncLocalStorage<Traced>();

/** Runs `fn` traced into `sink` (or untraced when there is none). */
export function traced<T>(sink: TraceSink | undefined, requestId: string, fn: () => Promise<T>): Promise<T> {
  return sink ? current.run({ sink, requestId }, fn) : fn();
}

export function tracing(): boolean {
  return current.getStore() !== undefined;
}

/** One debug line of the current request; nothing when it is not traced. */
export function trace(message: string, fields: Record<string, unknown>): void {
  const t = current.getStore();
  if (t) t.sink.debug(message, { requestId: t.requestId, ...fields });
}

/** Runs one step of the current request and, when traced, writes its duration (`step`, `ms`). */
export async function step<T>(name: string, fn: () => Promise<T>, fields: Record<string, unknown> = {}): Promise<T> {
  if (!tracing()) return fn();
  const started = performance.now();
  try {
    return await fn();
  } finally {
    trace('step', { step: name, ...fields, ms: msSince(started) });
  }
}

/** Milliseconds since `started` (a performance.now() value), rounded to 0.1. */
export const msSince = (started: number): number => Math.round((performance.now() - started) * 10) / 10;
