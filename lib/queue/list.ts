import { InvalidInputError } from '../errors.js';
import type { JobRecord } from '../ports/job-record.js';
import type { JobContext } from './context.js';

export const DEFAULT_JOB_LIST = 50;
export const MAX_JOB_LIST = 200;
/** Retired ids walked at most to find the newest finished jobs (pages of 500). */
const MAX_RETIRED_WALK = 5_000;

/** What the jobs view shows of a job (never its params: they are the runner's input). */
export interface JobView {
  readonly id: string;
  readonly type: string;
  readonly status: JobRecord['status'];
  readonly table?: readonly string[];
  readonly summary: Readonly<Record<string, string>>;
  readonly attempts: number;
  readonly error?: JobRecord['error'];
  readonly created_at: string;
  readonly updated_at: string;
  readonly finished_at?: string;
}

/**
 * `GET /v1/jobs` (docs/jobs.md, "Listing jobs"): the project's live jobs (queued and running,
 * oldest first) and its most recently finished ones (newest first), each at most `limit`.
 * `visible` leaves out the jobs of tables the caller may not read, as the change feed does.
 */
export async function listJobs(
  ctx: JobContext,
  input: { limit?: number },
  visible: (table: readonly string[]) => Promise<boolean> = async () => true,
): Promise<{ live: JobView[]; finished: JobView[] }> {
  const limit = input.limit ?? DEFAULT_JOB_LIST;
  if (limit < 1 || limit > MAX_JOB_LIST) throw new InvalidInputError(`limit must be between 1 and ${MAX_JOB_LIST}`);
  const live = (await ctx.queue.listLive({ limit })).jobs.map((j) => j.value);
  const ids: string[] = [];
  let startAfter: string | undefined;
  let walked = 0;
  do {
    const page = await ctx.queue.listRetired({ limit: 500, ...(startAfter === undefined ? {} : { startAfter }) });
    walked += page.ids.length;
    ids.push(...page.ids);
    if (ids.length > limit) ids.splice(0, ids.length - limit);
    startAfter = page.next;
  } while (startAfter !== undefined && walked < MAX_RETIRED_WALK);
  const finished = (await Promise.all(ids.reverse().map((id) => ctx.queue.read(id)))).flatMap((j) => (j ? [j.value] : []));
  const keep = async (jobs: readonly JobRecord[]) => {
    const verdicts = await Promise.all(jobs.map((j) => (j.table ? visible(j.table.id) : Promise.resolve(true))));
    return jobs.filter((_, i) => verdicts[i]).map(viewOf);
  };
  return { live: await keep(live), finished: await keep(finished) };
}

function viewOf(job: JobRecord): JobView {
  return {
    id: job.id,
    type: job.type,
    status: job.status,
    ...(job.table ? { table: job.table.id } : {}),
    summary: job.summary,
    attempts: job.attempts,
    ...(job.error ? { error: job.error } : {}),
    created_at: job.createdAt,
    updated_at: job.updatedAt,
    ...(job.finishedAt ? { finished_at: job.finishedAt } : {}),
  };
}
