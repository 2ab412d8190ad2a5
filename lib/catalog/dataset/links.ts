import { InvalidInputError } from '../../errors.js';
import { LinkRefusedError, type ObjectStore } from '../../ports/object-store.js';

/**
 * Refuses (code 13) a table location that is, or passes through, a symbolic link, before it is
 * registered or handed to LanceDB (which opens paths itself and would follow the link out of
 * the warehouse). Stores without links (S3, memory) have no `checkPath` and cost nothing here.
 * `what` names the object for the client; the message never carries an absolute path.
 */
export async function refuseLinks(store: ObjectStore, path: string, what: string): Promise<void> {
  if (!store.checkPath) return;
  try {
    await store.checkPath(path);
  } catch (err) {
    if (!(err instanceof LinkRefusedError)) throw err;
    throw new InvalidInputError(
      `${what} is or passes through a symbolic link (${JSON.stringify(err.link)} in the warehouse); rask never follows links, so that data cannot be served from here`,
      { cause: err },
    );
  }
}
