import { InvalidInputError, ServiceUnavailableError } from '../../errors.js';
import type { RaskEvent } from '../../events/cloudevent.js';
import { MAX_CHANGE_PAGE } from '../../ports/change-log.js';
import type { CatalogServices, FeedObjectKind } from '../services.js';

export const DEFAULT_CHANGE_PAGE = 100;

export const CHANGE_ORDERS = ['oldest_first', 'newest_first'] as const;

export interface ChangesInput {
  readonly since?: string;
  readonly before?: string;
  readonly order?: string;
  readonly limit?: number;
}

/**
 * `GET /v1/changes` (docs/events.md, "The feed"): one page of the project's change log after
 * `since`, with the cursor to resume from; or, with `order=newest_first`, the page before
 * `before` (absent: the newest), newest first, with `prev_cursor` for the older page and a
 * `next_cursor` to follow the log forward from. Events the caller may not see are left out (the
 * guard's `mayRead`, decided on each event's object); the cursors move past them all the same,
 * and say nothing about them (a time and a random suffix, or a byte offset).
 */
export async function listChanges(services: CatalogServices, project: string, input: ChangesInput) {
  const log = services.changes;
  if (!log) throw new ServiceUnavailableError('this deployment serves no change feed');
  const limit = input.limit ?? DEFAULT_CHANGE_PAGE;
  if (limit < 1 || limit > MAX_CHANGE_PAGE) throw new InvalidInputError(`limit must be between 1 and ${MAX_CHANGE_PAGE}`);
  const order = input.order ?? 'oldest_first';
  if (!(CHANGE_ORDERS as readonly string[]).includes(order)) throw new InvalidInputError(`order must be one of ${CHANGE_ORDERS.join(', ')}`);
  if (order === 'oldest_first') {
    if (input.before !== undefined) throw new InvalidInputError('before goes with order=newest_first; an oldest-first page resumes from since');
    const page = await log.page({ project, limit, ...(input.since === undefined ? {} : { since: input.since }) });
    return { events: await visibleTo(services, page.events), next_cursor: page.next, has_more: page.more };
  }
  if (input.since !== undefined) throw new InvalidInputError('since goes with oldest-first pages; a newest-first page goes back from before');
  const page = await log.pageBack({ project, limit, ...(input.before === undefined ? {} : { before: input.before }) });
  const events = await visibleTo(services, page.events);
  return { events, next_cursor: page.next, ...(page.before === undefined ? {} : { prev_cursor: page.before }), has_more: page.before !== undefined };
}

/** The events the caller may see (the guard's `mayRead`, decided once per object). */
export function visibleTo(services: CatalogServices, events: readonly RaskEvent[]): Promise<readonly RaskEvent[]> | readonly RaskEvent[] {
  return services.mayRead ? visible(events, services.mayRead) : events;
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
