import type { CatalogServices } from './services.js';

/**
 * Named steps of the multi-step doors, where a crash leaves a state the next request must be
 * able to finish or undo (docs/protocols.md, "Repair paths"). Tests inject
 * `services.crashPoint` and throw at one of them to build that state deterministically; in
 * production nothing is injected and this is a no-op.
 */
export type CrashPoint =
  /** DropNamespace: the record is marked `dropping`, nothing below it is touched yet. */
  | 'namespace-drop:marked'
  /** Cascade: one child namespace has been dropped completely. */
  | 'namespace-drop:child-dropped'
  /** Cascade: one table's record is removed, its bytes not yet purged. */
  | 'namespace-drop:table-record-removed'
  /** Cascade: one table is removed with its bytes. */
  | 'namespace-drop:table-removed'
  /** Everything below is gone; the namespace's own record is still `dropping`. */
  | 'namespace-drop:emptied'
  /** Namespace undrop: one namespace of the subtree is back. */
  | 'namespace-undrop:namespace-restored'
  /** Namespace undrop: one table of the subtree is re-registered. */
  | 'namespace-undrop:table-restored';

export async function crashPoint(services: CatalogServices, point: CrashPoint): Promise<void> {
  await services.crashPoint?.(point);
}
