import { asChangeStamp, CHANGE_FIELD } from '../events/change-stamp.js';
import { cloudEvent, type RaskEvent } from '../events/cloudevent.js';
import { OPERATION_EVENTS } from '../events/vocabulary.js';
import type { OperationId } from '../contract/operations.js';
import type { ObjectStore } from '../ports/object-store.js';
import { decodeSegment, parseTreeKey } from '../registry/keys.js';

/**
 * A change found again in what was durably written (docs/events.md, "Delivery"): the event of the
 * change whose stamp a registry record carries, with the change's own id, so it deduplicates
 * against the event the door published if that one got out too.
 *
 * Only where the record proves the change: the doors whose decisive write creates the record of
 * the object the request names (`{id}`), so "that record exists with that stamp" means "that
 * change happened". Any other stamp (a claim, a drop mark, a rename's intermediate state, a
 * record a later protocol step may still undo) proves nothing and yields nothing: a consumer never
 * sees an event of a change that did not happen. Drops leave no record to find; their event comes
 * from the door alone (docs/events.md says so).
 */
const DERIVABLE: Partial<Record<OperationId, 'namespace' | 'table'>> = {
  CreateNamespace: 'namespace',
  DeclareTable: 'table',
  CreateTable: 'table',
  RegisterTable: 'table',
};

/** Whether a change of door `operation` can be found again in what it wrote (its event re-derived). */
export const isDerivableOperation = (operation: string): boolean => Object.hasOwn(DERIVABLE, operation);

/** The project a registry key of a project's catalog tree belongs to (`p/<project>/t/…`). */
export function projectOfTreeKey(key: string): string | undefined {
  const m = /^p\/([^/]+)\/t\//.exec(key);
  return m ? decodeSegment(m[1]) : undefined;
}

/** The event a stored record's stamp proves, or undefined. `stored` is the record as stored (its JSON parsed). */
export function derivedEvent(key: string, stored: Record<string, unknown>): RaskEvent | undefined {
  const stamp = asChangeStamp(stored[CHANGE_FIELD]);
  if (!stamp?.id) return undefined;
  const kind = DERIVABLE[stamp.op as OperationId];
  const type = OPERATION_EVENTS[stamp.op as OperationId];
  const project = projectOfTreeKey(key);
  if (!kind || !type || project === undefined) return undefined;
  const tree = parseTreeKey(project, key);
  if (tree?.kind !== kind || JSON.stringify(tree.id) !== JSON.stringify(stamp.id)) return undefined;
  const warehouse = typeof stored.warehouse === 'string' && stored.warehouse.length > 0 ? stored.warehouse : undefined;
  return cloudEvent(
    type,
    {
      project,
      ...(warehouse ? { warehouse } : {}),
      kind,
      id: [...stamp.id],
      principal: stamp.by,
      operation: stamp.op,
      request_id: stamp.req,
      details: { via: 'registry' },
    },
    new Date(stamp.at),
    stamp.c,
  );
}

/**
 * The body of the registry record at `key` when it carries a change stamp; undefined when it is
 * gone, unstamped or unreadable. The text is checked for the field before it is parsed, since
 * recovery reads every record of a tree and most are not in its window.
 */
export async function readStampedRecord(store: ObjectStore, key: string): Promise<Record<string, unknown> | undefined> {
  const obj = await store.get(key);
  if (!obj) return undefined;
  const text = obj.body.toString('utf8');
  if (!text.includes(`"${CHANGE_FIELD}"`)) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
