import { randomBytes } from 'node:crypto';

/**
 * Job ids (the spec's transaction ids): 12 hex digits of the creation time in milliseconds,
 * then 20 random hex digits. Lowercase hex needs no escaping in a registry key, and byte order
 * is creation order to the millisecond (jobs created in the same millisecond sort at random),
 * so listing jobs is oldest first (claims are first-come, first-served) and the prune can tell
 * from an id alone that a job is too young to have expired.
 */

const ID = /^[0-9a-f]{32}$/;

export function newJobId(now: Date): string {
  const time = now.getTime().toString(16).padStart(12, '0');
  return time + randomBytes(10).toString('hex');
}

/** Whether `id` could be a job id; anything else cannot name a job and is never made a key. */
export function isJobId(id: string): boolean {
  return ID.test(id);
}

/** When the job with this id was created (the id's time part). */
export function jobIdTime(id: string): Date {
  return new Date(parseInt(id.slice(0, 12), 16));
}
