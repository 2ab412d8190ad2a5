import { randomUUID } from 'node:crypto';

/**
 * One change event, as CloudEvents 1.0 in structured JSON mode. The same object is written to
 * the local NDJSON file and, as `Detail`, to EventBridge (whose own envelope carries `type` as
 * `DetailType` and `source` as `Source`), so consumers see one shape everywhere.
 */
export interface RaskEvent {
  readonly specversion: '1.0';
  readonly id: string;
  /** `rask://<project>`: which tenant's catalog the change happened in. */
  readonly source: string;
  readonly type: string;
  /** The object's id, `<kind>:<part>.<part>…` (e.g. `table:sales.orders`). */
  readonly subject: string;
  readonly time: string;
  readonly datacontenttype: 'application/json';
  readonly data: RaskEventData;
}

export interface RaskEventData {
  readonly project: string;
  /** Present when the door knows it without another read. */
  readonly warehouse?: string;
  readonly kind: 'namespace' | 'table' | 'transaction' | 'materialized_view' | 'project' | 'warehouse' | 'principal' | 'grant' | 'maintenance' | 'request';
  readonly id: readonly string[];
  /** Who did it; `anonymous` when authentication is off. Never a key or token. */
  readonly principal: string;
  /** The operation (door) that made the change. */
  readonly operation: string;
  readonly request_id: string;
  /** The table version the change produced, when it produced one. */
  readonly version?: number;
  /** Door-specific facts (a rename's new id, a job id, a maintenance report summary, …). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * `id`: the change's id when the event reports a change with a stamp (lib/events/change-stamp.ts),
 * so every delivery and every re-derivation of one change carries the same id.
 */
export function cloudEvent(type: string, data: RaskEventData, now: Date = new Date(), id: string = randomUUID()): RaskEvent {
  return {
    specversion: '1.0',
    id,
    source: `rask://${encodeURIComponent(data.project)}`,
    type,
    subject: `${data.kind}:${data.id.join('.')}`,
    time: now.toISOString(),
    datacontenttype: 'application/json',
    data,
  };
}
