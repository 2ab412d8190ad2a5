import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Table versions the catalog's own code commits, noted where the commit happens (docs/events.md,
 * "Commits straight to storage"). The change relay announces every unclaimed manifest under a
 * table's `_versions/` as a commit made outside the catalog; a version the catalog made must
 * therefore be named by some event in the log before the relay judges its manifest. A door's
 * answer usually names its version (`version`), but a few commits have no answer to ride on: a
 * job's (a queued `create_index`, each slice of a backfill) and a door's whose answer stays `{}`
 * by the spec (a synchronous index build). Those call `noteCommit`, and whoever runs the work
 * listens: the event wrapper (lib/operations/emit.ts) puts the versions into the door's one event,
 * the job worker (lib/jobs/worker.ts) appends one event per version at once, before the job's next
 * step, so even a long backfill's first slice is claimed within the relay's settle window.
 *
 * Only the main branch is noted: the relay watches no branch's `_versions/`, and a branch's
 * version number would claim the main branch's version of that number.
 */
export type CommitSink = (version: number) => Promise<void> | void;

const current = new AsyncLocalStorage<CommitSink>();

/** Runs `fn` with `sink` hearing every main-branch commit noted meanwhile. */
export function withCommitSink<T>(sink: CommitSink, fn: () => Promise<T>): Promise<T> {
  return current.run(sink, fn);
}

/** Notes that the running work committed `version` of its table (ignored off the main branch). */
export async function noteCommit(version: number | undefined, branch?: string): Promise<void> {
  if (version === undefined || (branch !== undefined && branch !== 'main')) return;
  await current.getStore()?.(version);
}
