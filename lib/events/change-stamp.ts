import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The change stamp (docs/events.md, "The change stamp"): who changed what, carried inside the
 * registry records a mutating request writes. The event wrapper (lib/operations/emit.ts) opens
 * one stamp per mutating request; the registry (lib/registry/registry.ts) adds it to every record
 * it writes while the stamp is current, as the field `_change` beside its write id. It rides in
 * the record the door writes anyway, so it costs no request; and because it is in what was
 * durably written, a change whose process died before its event was logged can be found again
 * (lib/catalog/change-derivation.ts). Readers never see it: `Registry.read` takes it off.
 */
export interface ChangeStamp {
  /** The change's id: the `id` of its event, however often and by whichever path it is delivered. */
  readonly c: string;
  /** The operation (door) that made the change. */
  readonly op: string;
  /** The principal that made it. */
  readonly by: string;
  /** The request id. */
  readonly req: string;
  /** When the request began (ISO 8601). */
  readonly at: string;
  /** The object the request names (`{id}`), when it names one. */
  readonly id?: readonly string[];
}

/** The record field that holds the stamp (readers never see it). */
export const CHANGE_FIELD = '_change';

const current = new AsyncLocalStorage<ChangeStamp>();

/** Runs `fn` with `stamp` current: every registry record written meanwhile carries it. */
export function withChangeStamp<T>(stamp: ChangeStamp, fn: () => Promise<T>): Promise<T> {
  return current.run(stamp, fn);
}

/** The stamp of the request being served, if it is a mutation. */
export function currentChangeStamp(): ChangeStamp | undefined {
  return current.getStore();
}

/** A stamp read back from a stored record, or undefined when the field is not a stamp. */
export function asChangeStamp(value: unknown): ChangeStamp | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const s = value as Record<string, unknown>;
  if (typeof s.c !== 'string' || typeof s.op !== 'string' || typeof s.by !== 'string' || typeof s.req !== 'string' || typeof s.at !== 'string') return undefined;
  const id = Array.isArray(s.id) && s.id.every((p) => typeof p === 'string') ? (s.id as string[]) : undefined;
  return { c: s.c, op: s.op, by: s.by, req: s.req, at: s.at, ...(id ? { id } : {}) };
}
