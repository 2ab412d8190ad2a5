import { ServiceUnavailableError } from '../../errors.js';
import type { RaskEvent } from '../../events/cloudevent.js';
import { MAX_CHANGE_PAGE } from '../../ports/change-log.js';
import type { CatalogServices } from '../services.js';
import { visibleTo } from './changes.js';

/** Events of the project read back from the newest, at most, for one question (one page of the log). */
export const REQUEST_SCAN_EVENTS = MAX_CHANGE_PAGE;

/**
 * `GET /v1/requests/{request_id}` (docs/operations.md, "Did my commit land?"): what one request
 * of the caller changed, for a client whose answer was lost and who sent no Idempotency-Key. Every
 * mutating request stamps its events with its request id (the client's `x-request-id` when it sent
 * a valid one, lib/http/ids.ts), so the answer is read from the project's change log, newest
 * first, over its newest REQUEST_SCAN_EVENTS events: the request a client asks about is the one it
 * has just sent.
 *
 * Only the caller's own changes, in the caller's project, that the caller may still see: another
 * principal asking by the same id, or anyone asking in another project, gets the same empty answer
 * as for an id that was never used, so the door tells no one whether a request exists.
 */
export async function requestChanges(services: CatalogServices, requestId: string, principal: string) {
  const log = services.changes;
  if (!log) throw new ServiceUnavailableError('this deployment keeps no change log, so it cannot tell what a request changed');
  const page = await log.pageBack({ project: services.project, limit: REQUEST_SCAN_EVENTS });
  const own = page.events.filter((e) => e.data.request_id === requestId && e.data.principal === principal);
  const seen = await visibleTo(services, own);
  const oldest = page.events[page.events.length - 1];
  return {
    request_id: requestId,
    // Oldest first: the order the request made them in.
    changes: [...seen].reverse().map(changeOf),
    // Whether older events exist that were not searched (a busy project: ask sooner, or page the feed).
    searched_all: page.before === undefined,
    ...(oldest && page.before !== undefined ? { searched_since: oldest.time } : {}),
  };
}

function changeOf(e: RaskEvent) {
  return {
    event_id: e.id,
    type: e.type,
    time: e.time,
    operation: e.data.operation,
    kind: e.data.kind,
    id: e.data.id,
    ...(e.data.version === undefined ? {} : { version: e.data.version }),
  };
}
