import { StorageUnavailableError } from '../../errors.js';

/**
 * errno codes of a disk that is failing, full or out of descriptors, rather than of a wrong
 * request: the same meaning as S3's 5xx and throttling (issue #35; docs/protocols.md, "When S3
 * fails"), so the same answer, 503 / code 17 with Retry-After.
 */
const UNAVAILABLE_CODES = new Set(['EIO', 'EMFILE', 'ENFILE', 'ENOSPC', 'EDQUOT', 'EBUSY', 'EAGAIN']);

/** The error the catalog sees for a failed filesystem operation: StorageUnavailableError, or `error` itself. */
export function fsStorageFailure(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined || !UNAVAILABLE_CODES.has(code)) return error;
  const what = code === 'ENOSPC' || code === 'EDQUOT' ? 'is full' : code === 'EMFILE' || code === 'ENFILE' ? 'is out of file descriptors' : 'is failing';
  return new StorageUnavailableError(`the catalog's storage ${what} (${code}); retry`, { cause: error });
}

/** Runs `io`, turning a failing disk into StorageUnavailableError. */
export async function onDisk<T>(io: () => Promise<T>): Promise<T> {
  try {
    return await io();
  } catch (error) {
    throw fsStorageFailure(error);
  }
}
