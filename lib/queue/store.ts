/**
 * The WorkQueue port on the registry's object store: the same code, and the same
 * compare-and-swap the contract suite proves, on local disk, in memory and on S3.
 *
 * A job lives at `p/<P>/jobs/live/<id>` until it has finished, then moves to
 * `p/<P>/jobs/done/<id>` (keys.ts), so the listing every claim makes stays as short as the
 * number of unfinished jobs. There is no multi-object transaction, so the move has a protocol:
 *
 *   1. read the live record (must be finished), etag E;
 *   2. write the same record to `done` (create, or overwrite a copy left by an interrupted move);
 *   3. delete the live record if its etag is still E; if it changed meanwhile, start again.
 *
 * While both copies exist the live one is the job: `read` looks there first, and every write
 * goes to the copy its etag came from (the etag handed out names its copy), so a write made to
 * the live record during a move makes step 3 fail and the move copy it again. Once the live
 * record is gone it never comes back, and the done copy holds everything written to it.
 */
import type { WorkQueue, JobPage, PageRequest, RetiredPage } from '../ports/work-queue.js';
import { ConditionFailedError } from '../ports/object-store.js';
import { decodeSegment, keys } from '../registry/keys.js';
import type { Registry } from '../registry/registry.js';
import type { Versioned } from '../ports/object-store.js';
import { isJobId } from './ids.js';
import { isTerminal, type JobRecord } from '../ports/job-record.js';

type Copy = 'live' | 'done';

/** The etag we hand out is `<copy>:<store etag>`, so a replace knows which object it guards. */
const tag = (copy: Copy, etag: string) => `${copy}:${etag}`;

function untag(etag: string): { copy: Copy; etag: string } {
  const i = etag.indexOf(':');
  const copy = etag.slice(0, i);
  if (copy !== 'live' && copy !== 'done') throw new Error(`not a job etag: ${etag}`);
  return { copy, etag: etag.slice(i + 1) };
}

export class RegistryWorkQueue implements WorkQueue {
  constructor(
    private readonly registry: Registry,
    private readonly project: string,
  ) {}

  private key(copy: Copy, id: string): string {
    return copy === 'live' ? keys.liveJob(this.project, id) : keys.doneJob(this.project, id);
  }

  async insert(job: JobRecord): Promise<void> {
    await this.registry.create(this.key('live', job.id), job);
  }

  async read(id: string): Promise<Versioned<JobRecord> | undefined> {
    if (!isJobId(id)) return undefined;
    for (const copy of ['live', 'done'] as const) {
      const found = await this.registry.read<JobRecord>(this.key(copy, id));
      if (found) return { value: found.value, etag: tag(copy, found.etag) };
    }
    return undefined;
  }

  async replace(job: JobRecord, etag: string): Promise<string> {
    const { copy, etag: raw } = untag(etag);
    return tag(copy, await this.registry.replace(this.key(copy, job.id), job, raw));
  }

  async listLive(page: PageRequest): Promise<JobPage> {
    const { ids, next } = await this.listIds(keys.liveJobsPrefix(this.project), page);
    const unreadable: string[] = [];
    const read = await Promise.all(
      ids.map(async (id) => {
        try {
          const found = await this.registry.read<JobRecord>(this.key('live', id));
          return found && { value: found.value, etag: tag('live', found.etag) };
        } catch {
          // One corrupt record must not stop every other job from running; the worker reports it.
          unreadable.push(id);
          return undefined;
        }
      }),
    );
    // A record listed but gone by the time it was read has just been retired: nothing to claim.
    return { jobs: read.filter((j): j is Versioned<JobRecord> => j !== undefined), unreadable, next };
  }

  /** Without an index on due times, every live job is a candidate (`now` is not used). */
  listDue(_now: Date, page: PageRequest): Promise<JobPage> {
    return this.listLive(page);
  }

  async retire(id: string): Promise<void> {
    await this.registry.retrying(`retiring job ${id}`, async () => {
      const live = await this.registry.read<JobRecord>(this.key('live', id));
      if (!live || !isTerminal(live.value.status)) return;
      const done = await this.registry.read<JobRecord>(this.key('done', id));
      if (done) await this.registry.replace(this.key('done', id), live.value, done.etag);
      else await this.registry.create(this.key('done', id), live.value);
      await this.registry.remove(this.key('live', id), live.etag);
    });
  }

  async listRetired(page: PageRequest): Promise<RetiredPage> {
    return this.listIds(keys.doneJobsPrefix(this.project), page);
  }

  async remove(id: string, etag: string): Promise<void> {
    const { copy, etag: raw } = untag(etag);
    // Only retired jobs are deleted; a live record is the job itself.
    if (copy !== 'done') throw new ConditionFailedError(this.key(copy, id), 'etag-mismatch');
    await this.registry.remove(this.key('done', id), raw);
  }

  private async listIds(prefix: string, page: PageRequest): Promise<{ ids: string[]; next?: string }> {
    const listed = await this.registry.store.list({
      prefix,
      startAfter: page.startAfter === undefined ? undefined : prefix + page.startAfter,
      limit: page.limit,
    });
    const ids = listed.objects
      .map((o) => o.key.slice(prefix.length))
      .filter((rest) => !rest.includes('/'))
      .map(decodeSegment)
      .filter(isJobId);
    const last = listed.objects[listed.objects.length - 1];
    return listed.truncated && last ? { ids, next: decodeSegment(last.key.slice(prefix.length)) } : { ids };
  }
}
