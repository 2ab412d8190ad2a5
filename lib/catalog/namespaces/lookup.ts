import { NamespaceNotFoundError } from '../../errors.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import type { NamespaceRecord } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import type { CatalogServices } from '../services.js';
import { fmtId } from '../ids.js';
import { describeContents } from './drop-protocol.js';
import { settleDrop } from './drop.js';
import { readNamespace, recordedBehavior } from './record.js';

/**
 * The reads every door of a namespace (and of a table in it) starts from: the namespace must be
 * there and not mid-drop (a drop met on the way is settled first, repair on read), and a child
 * written under it is withdrawn if the parent began dropping meanwhile.
 */

/** The namespace, which must exist and not be mid-drop; the root always exists. */
export async function requireNamespace(
  services: CatalogServices,
  id: readonly string[],
  hint = '',
): Promise<Versioned<NamespaceRecord> | undefined> {
  if (id.length === 0) return undefined;
  let found = await readNamespace(services, id);
  if (found?.value.state === 'dropping') {
    if (services.readOnly) {
      // No repair without write access: answer what settling would leave (decidedDrop).
      found = await decidedDrop(services, id, found);
    } else {
      // An interrupted (or running) drop: finish or undo it, then answer from what is left.
      await settleDrop(services, id, found);
      found = await readNamespace(services, id);
    }
  }
  if (found?.value.state !== 'active') {
    throw new NamespaceNotFoundError(`namespace ${fmtId(id)} does not exist${hint}`);
  }
  return found;
}

/**
 * A `dropping` namespace as finishing its drop would leave it, read without writing (read-only
 * mode): a cascade is always finished, so the namespace is gone; a restrict drop is undone when
 * the namespace still holds something (the record back to active) and finished when it is empty.
 * The answer carries the stored etag; read-only callers never compare-and-swap on it.
 */
async function decidedDrop(
  services: CatalogServices,
  id: readonly string[],
  marked: Versioned<NamespaceRecord>,
): Promise<Versioned<NamespaceRecord> | undefined> {
  if (recordedBehavior(marked.value) !== 'restrict') return undefined;
  if (!(await describeContents(services, id))) return undefined;
  const { drop: _drop, ...rest } = marked.value;
  return { value: { ...rest, state: 'active' }, etag: marked.etag };
}

/**
 * After writing a child record: if the parent was dropped or began dropping meanwhile, withdraw
 * the child. A drop marks `dropping` before it lists children, so a child whose re-check still
 * sees the parent active was written before that mark, and the drop's listing will see it.
 */
export async function confirmParentOrWithdraw(
  services: CatalogServices,
  parent: readonly string[],
  childKey: string,
  childEtag: string,
  /** Runs only after this request's own withdrawal removed the child (not when a cascade did). */
  afterWithdrawal?: () => Promise<void>,
): Promise<void> {
  if (parent.length === 0) return;
  const now = await readNamespace(services, parent);
  if (now && now.value.state === 'active') return;
  let withdrawn = true;
  try {
    await services.registry.remove(childKey, childEtag);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err; // a cascade already removed it
    withdrawn = false;
  }
  if (withdrawn) await afterWithdrawal?.();
  throw new NamespaceNotFoundError(`namespace ${fmtId(parent)} was dropped while the request ran`);
}
