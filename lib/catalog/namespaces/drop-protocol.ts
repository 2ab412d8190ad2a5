import { ConcurrentModificationError, NamespaceNotEmptyError } from '../../errors.js';
import { dropMarkedSegment, encodeSegment, keys } from '../../registry/keys.js';
import type { NamespaceRecord, SubtreeDrop } from '../../registry/records.js';
import type { CatalogServices } from '../services.js';
import { fmtId } from '../ids.js';
import { clearDropMark, putDropMark } from './drop-marks.js';
import { type DropBehavior, readNamespace } from './record.js';
import { subtreeDropFor } from './trash-records.js';

/**
 * The single-record steps of the namespace drop protocol (docs/protocols.md, "DropNamespace:
 * finishing or undoing an interrupted drop"): mark `dropping`, undo the mark, remove the record
 * while it carries the mark, and say what is inside. drop.ts runs them (finishDrop); it keeps the
 * cascade too, because a cascade drops each child namespace with DropNamespace itself.
 */

/**
 * CAS the record to `dropping`; an existing mark is returned as it is (its drop is joined). A
 * cascade in a warehouse with trash grace carries the subtree-drop context on its mark (the
 * outermost drop makes it, its descendants copy it), so an interrupted detach is finished as one.
 */
export async function markDropping(
  services: CatalogServices,
  id: readonly string[],
  input: { behavior: DropBehavior; principal?: string; purge?: boolean; trash?: SubtreeDrop; protectionChecked?: boolean },
) {
  const key = keys.namespace(services.project, id);
  const { behavior } = input;
  return services.registry.retrying(`drop namespace ${fmtId(id)}`, async () => {
    const found = await readNamespace(services, id);
    if (!found) return undefined;
    if (found.value.state === 'dropping') return found;
    // Only the outermost drop decides; a descendant inherits its decision (trash or none).
    const decides = behavior === 'cascade' && !input.purge && !input.protectionChecked;
    const trash = input.trash ?? (decides ? await subtreeDropFor(services, found.value, input.principal) : undefined);
    const nonce = services.newId();
    // The mark goes first, so a listing never meets a `dropping` record without one.
    await putDropMark(services, id, nonce);
    const record: NamespaceRecord = {
      ...found.value,
      state: 'dropping',
      drop: {
        behavior,
        nonce,
        since: services.now().toISOString(),
        ...(trash ? { trash } : {}),
        ...(input.purge && behavior === 'cascade' ? { purge: true } : {}),
      },
    };
    return { value: record, etag: await services.registry.replace(key, record, found.etag) };
  });
}

/** Undoes one drop's mark; a mark with another nonce belongs to a later drop and stays. */
export async function unmarkDropping(services: CatalogServices, id: readonly string[], nonce: string | undefined): Promise<void> {
  const key = keys.namespace(services.project, id);
  await services.registry.retrying(`restore namespace ${fmtId(id)}`, async () => {
    const found = await readNamespace(services, id);
    if (!found || found.value.state === 'active' || found.value.drop?.nonce !== nonce) return;
    const { drop: _drop, ...rest } = found.value;
    await services.registry.replace(key, { ...rest, state: 'active' }, found.etag);
  });
  await clearDropMark(services, id, nonce);
}

/**
 * Removes the record, only while it still carries this drop's mark: a concurrent request that
 * undid the drop (a restrict drop that met a child being created) must not see its restored
 * namespace deleted under the child.
 */
export async function removeMarked(services: CatalogServices, id: readonly string[], nonce: string | undefined, behavior: DropBehavior): Promise<void> {
  const key = keys.namespace(services.project, id);
  await services.registry.retrying(`drop namespace ${fmtId(id)}`, async () => {
    const found = await readNamespace(services, id);
    if (!found) return;
    // Only a restrict drop is ever undone by someone else, and only because it met a child being
    // created (finishDrop): the namespace is not empty, which is this drop's answer too.
    if (found.value.state === 'active' && behavior === 'restrict') {
      throw new NamespaceNotEmptyError(`namespace ${fmtId(id)} is not empty: a table or namespace was created in it during the drop`);
    }
    if (found.value.state !== 'dropping' || found.value.drop?.nonce !== nonce) {
      throw new ConcurrentModificationError(`namespace ${fmtId(id)} was restored by a concurrent request; retry the drop`);
    }
    await services.registry.remove(key, found.etag);
  });
}

/** A short description of what is inside, or undefined when empty. */
export async function describeContents(services: CatalogServices, id: readonly string[]): Promise<string | undefined> {
  const sample = 5;
  const [children, tables] = await Promise.all([
    services.registry.listNames(keys.childNamespacesPrefix(services.project, id), { limit: sample, encode: encodeSegment }),
    services.registry.listNames(keys.tablesPrefix(services.project, id), { limit: sample, encode: encodeSegment }),
  ]);
  const parts: string[] = [];
  const list = (p: { names: string[]; more: boolean }) => p.names.map((n) => JSON.stringify(n)).join(', ') + (p.more ? ', …' : '');
  if (children.names.length) parts.push(`child namespaces ${list(children)}`);
  if (tables.names.length) parts.push(`tables ${list(tables)}`);
  if (parts.length === 0) {
    // Records of other kinds under the subtree still make it non-empty.
    // A drop mark left behind by a crash is not contents (drop-marks.ts).
    for (let startAfter: string | undefined; ; ) {
      const rest = await services.registry.store.list({ prefix: keys.subtree(services.project, id), startAfter, limit: 100 });
      const other = rest.objects.find((o) => !isDropMarkKey(o.key));
      if (other) return `objects such as ${other.key}`;
      if (!rest.truncated || rest.objects.length === 0) return undefined;
      startAfter = rest.objects[rest.objects.length - 1].key;
    }
  }
  return parts.join(' and ');
}

const isDropMarkKey = (key: string) => dropMarkedSegment(key.slice(key.lastIndexOf('/') + 1)) !== undefined;
