import { InvalidInputError, ServiceUnavailableError } from '../../errors.js';
import type { RaskEvent } from '../../events/cloudevent.js';
import { MAX_CHANGE_PAGE } from '../../ports/change-log.js';
import type { CatalogServices, FeedObjectKind } from '../services.js';

export const DEFAULT_CHANGE_PAGE = 100;

/**
 * `GET /v1/changes` (docs/events.md, "The feed"): one page of the project's change log after
 * `since`, with the cursor to resume from. Events the caller may not see are left out (the guard's
 * `mayRead`, decided on each event's object); the cursor moves past them all the same, and says
 * nothing about them (a time and a random suffix, or a byte offset).
 */
export async function listChanges(services: CatalogServices, project: string, input: { since?: string; limit?: number }) {
  const log = services.changes;
  if (!log) throw new ServiceUnavailableError('this deployment serves no change feed');
  const limit = input.limit ?? DEFAULT_CHANGE_PAGE;
  if (limit < 1 || limit > MAX_CHANGE_PAGE) throw new InvalidInputError(`limit must be between 1 and ${MAX_CHANGE_PAGE}`);
  const page = await log.page({ project, limit, ...(input.since === undefined ? {} : { since: input.since }) });
  const events = services.mayRead ? await visible(page.events, services.mayRead) : page.events;
  return { events, next_cursor: page.next, has_more: page.more };
}

async function visible(events: readonly RaskEvent[], mayRead: NonNullable<CatalogServices['mayRead']>): Promise<RaskEvent[]> {
  const decided = new Map<string, Promise<boolean>>();
  const verdicts = await Promise.all(
    events.map((e) => {
      const kind = objectKind(e);
      const key = `${kind}\0${JSON.stringify(e.data.id)}`;
      let verdict = decided.get(key);
      if (!verdict) decided.set(key, (verdict = mayRead(kind, e.data.id)));
      return verdict;
    }),
  );
  return events.filter((_, i) => verdicts[i]);
}

/**
 * What an event is decided on: a table's or a namespace's on that object; grants, principals and
 * refused requests (whose messages name principals) on administering the project; the rest
 * (project, warehouse, policies, maintenance reports) on reading the project.
 */
function objectKind(e: RaskEvent): FeedObjectKind {
  switch (e.data.kind) {
    case 'table':
    case 'materialized_view':
      return e.data.id.length > 0 ? 'table' : 'project';
    case 'namespace':
      return e.data.id.length > 0 ? 'namespace' : 'project';
    case 'grant':
    case 'principal':
    case 'request':
      return 'admin';
    default:
      return 'project';
  }
}
