import { CatalogError, ErrorCode } from '../errors.js';
import type { OperationId } from '../contract/operations.js';
import type { HandlerMap, OperationHandler, OperationRequest } from '../contract/request.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import { signal } from '../signals.js';
import { cloudEvent, type RaskEventData } from '../events/cloudevent.js';
import { ACCESS_DENIED_EVENT, OPERATION_EVENTS } from '../events/vocabulary.js';
import { randomUUID } from 'node:crypto';
import { withChangeStamp, type ChangeStamp } from '../events/change-stamp.js';
import { withCommitSink } from '../events/commits.js';

/**
 * Wraps every handler so that a successful mutation emits exactly one change event (its type
 * from the vocabulary), after the change and before the answer, and a refusal for lack of
 * permission (code 15) emits an audit event. Reads emit nothing. A mutation runs under its change
 * stamp (lib/events/change-stamp.ts), so every registry record it writes carries the change, and
 * the event's id is the change's: a copy derived later from a record (lib/catalog/change-derivation.ts)
 * deduplicates against it (docs/events.md, "Delivery"). Publishing never fails the request
 * (EventPublisher.publish does not reject), so an outage of the log or the bus costs events,
 * which are counted and logged, not answers.
 */
export function withEvents<S extends { readonly project: string }>(
  handlers: HandlerMap<S>,
  publisher: EventPublisher,
  now: () => Date = () => new Date(),
): HandlerMap<S> {
  const wrapped: Partial<Record<OperationId, OperationHandler<S>>> = {};
  for (const [operationId, handler] of Object.entries(handlers) as [OperationId, OperationHandler<S> | undefined][]) {
    if (!handler) continue;
    const type = OPERATION_EVENTS[operationId];
    wrapped[operationId] = async (req, services) => {
      let result: unknown;
      // A mutation's records carry its change stamp (lib/events/change-stamp.ts); its id is the event's.
      const stamp = type ? changeStamp(req, now()) : undefined;
      // The main-branch versions the door committed (lib/events/commits.ts): its event names them all.
      const commits: number[] = [];
      try {
        result = stamp
          ? await withChangeStamp(stamp, () => withCommitSink((v) => void commits.push(v), () => handler(req, services)))
          : await handler(req, services);
      } catch (err) {
        if (err instanceof CatalogError && err.code === ErrorCode.PermissionDenied) {
          await publisher.publish([cloudEvent(ACCESS_DENIED_EVENT, eventData(req, services.project, undefined, { error: err.message }), now())]);
        }
        throw err;
      }
      if (type && stamp) await publisher.publish([cloudEvent(type, withCommits(eventData(req, services.project, result), commits), new Date(stamp.at), stamp.c)]);
      return result;
    };
  }
  return wrapped;
}

/**
 * The audit event for a request the router's guard refused (403 / code 15) before any handler
 * ran. Only for projects that exist (docs/events.md): anyone may send requests for made-up
 * projects, and auditing each would let them fill the event store; those are counted as the
 * `DeniedUnknownProject` signal (a metric on AWS) and emit nothing.
 */
export function auditDenied(
  publisher: EventPublisher,
  defaultProject: string,
  projectExists: (project: string) => Promise<boolean>,
  now: () => Date = () => new Date(),
) {
  return async (req: OperationRequest, err: Error): Promise<void> => {
    if (!(await projectExists(req.project ?? defaultProject))) return signal('DeniedUnknownProject');
    await publisher.publish([cloudEvent(ACCESS_DENIED_EVENT, eventData(req, defaultProject, undefined, { error: err.message }), now())]);
  };
}

/** The stamp of one mutating request: who, which door, which request, when, on what. */
function changeStamp(req: OperationRequest, at: Date): ChangeStamp {
  return {
    c: randomUUID(),
    op: req.operation.operationId,
    by: req.caller?.principal ?? 'anonymous',
    req: req.requestId,
    at: at.toISOString(),
    ...(req.id.length > 0 ? { id: [...req.id] } : {}),
  };
}

/** What the event says about a request: never its body, keys or tokens. */
export function eventData(req: OperationRequest, defaultProject: string, result: unknown, extra?: Record<string, unknown>): RaskEventData {
  // The authenticated caller and the project a base URI names (set by the router's guard).
  const { caller, project } = req;
  const answer = (typeof result === 'object' && result !== null ? result : {}) as Record<string, unknown>;
  const details: Record<string, unknown> = { ...extra };
  for (const key of ['transaction_id', 'job_id', 'location'] as const) {
    if (typeof answer[key] === 'string') details[key] = answer[key];
  }
  // A write that dropped or uncovered indices says so in its one event (docs/data-plane.md, "Column-only fills").
  for (const key of ['index_effects', 'key_index', 'bytes_written'] as const) {
    if (answer[key] !== undefined) details[key] = answer[key];
  }
  if (req.operation.operationId === 'RenameTable') {
    details.new_namespace_id = req.body.new_namespace_id ?? req.id.slice(0, -1);
    details.new_table_name = req.body.new_table_name;
  }
  if (req.indexName !== undefined) details.index_name = req.indexName;
  return {
    project: project ?? defaultProject,
    ...(typeof answer.warehouse === 'string' ? { warehouse: answer.warehouse } : {}),
    kind: kindOf(req.operation.path),
    id: req.id.length > 0 ? [...req.id] : controlId(req),
    principal: caller?.principal ?? 'anonymous',
    operation: req.operation.operationId,
    request_id: req.requestId,
    ...(versionOf(answer) !== undefined ? { version: versionOf(answer) } : {}),
    ...(Object.keys(details).length > 0 ? { details } : {}),
  };
}

/**
 * A door's event with the versions it committed that its answer does not name: a synchronous
 * index build answers `{}` (its version becomes `version`), a column-only fill also builds and
 * re-covers its key index (those become `details.commits`, which the change relay claims like a
 * maintenance run's).
 */
function withCommits(data: RaskEventData, commits: readonly number[]): RaskEventData {
  if (data.kind !== 'table' || commits.length === 0) return data;
  const version = data.version ?? Math.max(...commits);
  const others = [...new Set(commits)].filter((v) => v !== version).sort((a, b) => a - b);
  return {
    ...data,
    version,
    ...(others.length > 0 ? { details: { ...data.details, commits: others.map((v) => ({ id: [...data.id], from: v - 1, to: v })) } } : {}),
  };
}

/** A control-plane door names its object in the path (`{project}`, …) or, when creating, the body. */
function controlId(req: OperationRequest): string[] {
  const named = req.params?.project ?? req.params?.warehouse ?? req.params?.principal ?? req.body.name ?? req.body.principal;
  return typeof named === 'string' && named.length > 0 ? [named] : [];
}

function kindOf(path: string): RaskEventData['kind'] {
  const segment = path.split('/')[2];
  switch (segment) {
    case 'namespace':
      return 'namespace';
    case 'table':
      return 'table';
    case 'transaction':
      return 'transaction';
    case 'materialized_view':
      return 'materialized_view';
    case 'projects':
      return 'project';
    case 'warehouses':
      return 'warehouse';
    case 'principals':
      return 'principal';
    case 'grants':
      return 'grant';
    case 'maintenance-policy':
      return 'project';
    default:
      return 'request';
  }
}

/** The version a write produced: `version` in most answers, `version.version` in CreateTableVersion's. */
function versionOf(answer: Record<string, unknown>): number | undefined {
  const v = answer.version;
  if (typeof v === 'number') return v;
  if (typeof v === 'object' && v !== null && typeof (v as { version?: unknown }).version === 'number') return (v as { version: number }).version;
  return undefined;
}
