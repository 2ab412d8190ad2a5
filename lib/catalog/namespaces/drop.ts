import { ConcurrentModificationError, InvalidInputError, NamespaceNotEmptyError, NamespaceNotFoundError } from '../../errors.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { keys, parseTreeKey } from '../../registry/keys.js';
import type { NamespaceRecord, SubtreeDrop } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import { crashPoint } from '../crash-points.js';
import type { CatalogServices } from '../services.js';
import { clearMarkerSubtree } from '../protocols/markers.js';
import { assertNoProtectedDescendants, clearProtection, clearProtectionSubtree, protectedError, readProtectionRecord } from '../protection.js';
import { fmtId, validateId } from '../ids.js';
import { removeTableForCascade } from './cascade.js';
import { clearDropMark, clearDropMarksBelow } from './drop-marks.js';
import { describeContents, markDropping, removeMarked, unmarkDropping } from './drop-protocol.js';
import { type DropBehavior, type DropMode, readNamespace, recordedBehavior } from './record.js';
import { fileNamespace } from './trash-records.js';

/**
 * DropNamespace, and finishing a drop for whoever meets its mark (docs/protocols.md,
 * "DropNamespace: finishing or undoing an interrupted drop"). The single-record steps are in
 * drop-protocol.ts; the cascade stays here because it drops each child namespace with
 * DropNamespace itself (apart, the two files would import each other).
 */

export async function dropNamespace(
  services: CatalogServices,
  input: {
    id: readonly string[];
    mode: DropMode;
    behavior: DropBehavior;
    force?: boolean;
    /** Set by a cascade for the namespaces below it: the outermost drop checked them all. */
    protectionChecked?: boolean;
    /** Who drops it (for trash records). */
    principal?: string;
    /** Destroy now even in a warehouse that keeps dropped objects (docs/lifecycle.md). */
    purge?: boolean;
    /** Set by a recoverable cascade for the namespaces below it: the drop they are filed under. */
    trash?: SubtreeDrop;
  },
): Promise<{ properties?: Record<string, string> }> {
  const { id } = input;
  if (id.length === 0) throw new InvalidInputError('the root namespace cannot be dropped');
  validateId('namespace', id);
  // Protection is checked before anything is marked, and for a cascade on every descendant
  // first (docs/lifecycle.md): a refused drop leaves the whole subtree as it was.
  if (!input.force && !input.protectionChecked) {
    const [current, protection] = await Promise.all([readNamespace(services, id), readProtectionRecord(services, 'namespace', id)]);
    if (current?.value.state === 'active' && protection?.uid === current.value.uid) throw protectedError('namespace', id, 'dropped');
    if (current && input.behavior === 'cascade') await assertNoProtectedDescendants(services, id, false);
  }
  for (let attempt = 1; ; attempt++) {
    const marked = await markDropping(services, id, input);
    if (!marked) {
      if (input.mode === 'skip') return {};
      throw new NamespaceNotFoundError(`namespace ${fmtId(id)} does not exist`);
    }
    // A mark left by another drop is joined, unless it was a restrict drop and we were asked to
    // cascade: then that one is settled first and ours marks afresh.
    if (recordedBehavior(marked.value) === 'restrict' && input.behavior === 'cascade' && attempt < 3) {
      await settleDrop(services, id, marked);
      continue;
    }
    await finishDrop(services, id, marked.value);
    if (input.force && !input.protectionChecked) {
      // The forced drop took protected objects with it; their records protect nothing now.
      await clearProtectionSubtree(services, id);
      await clearProtection(services, 'namespace', id);
    }
    return { properties: { ...marked.value.properties } };
  }
}

/**
 * Drives a `dropping` mark to its end, the way the request that set it would have: a cascade
 * is finished; a restrict drop is finished when the namespace is empty and undone (record back
 * to `active`, 409 / code 3) otherwise. Every step is conditional or idempotent, so any number of
 * requests may do this at once — the dropping request itself, and whoever meets the mark after
 * it died (docs/protocols.md, "Repair paths").
 */
async function finishDrop(services: CatalogServices, id: readonly string[], marked: NamespaceRecord): Promise<void> {
  await crashPoint(services, 'namespace-drop:marked');
  const nonce = marked.drop?.nonce;
  if (recordedBehavior(marked) === 'restrict') {
    const contents = await describeContents(services, id);
    if (contents) {
      await unmarkDropping(services, id, nonce);
      throw new NamespaceNotEmptyError(`namespace ${fmtId(id)} is not empty: it contains ${contents}`);
    }
  } else {
    await cascadeChildren(services, id, marked.drop);
  }
  await crashPoint(services, 'namespace-drop:emptied');
  // A recoverable cascade files the namespace (idempotent) before its record goes.
  if (marked.drop?.trash) await fileNamespace(services, marked, marked.drop.trash);
  await removeMarked(services, id, nonce, recordedBehavior(marked));
  await clearDropMark(services, id, nonce);
  // A cascade's listing removed its children's stale marks; an (empty) restrict drop's did not.
  if (recordedBehavior(marked) === 'restrict') await clearDropMarksBelow(services, id);
  // No table is left below: any has-data marker there is a leftover of a crash.
  await clearMarkerSubtree(services, id);
}

/** Finishes (or undoes) a drop left `dropping` at `id`, if there is one: the undrop starts from a settled name. */
export async function settleNamespace(services: CatalogServices, id: readonly string[]): Promise<void> {
  const found = await readNamespace(services, id);
  if (found?.value.state === 'dropping') await settleDrop(services, id, found);
}

/** finishDrop for a request that met the mark on its way to something else: any outcome will do. */
export async function settleDrop(services: CatalogServices, id: readonly string[], marked: Versioned<NamespaceRecord>): Promise<void> {
  try {
    await finishDrop(services, id, marked.value);
  } catch (err) {
    // Undone (not empty), or decided differently by a concurrent request: either way settled.
    if (!(err instanceof NamespaceNotEmptyError) && !(err instanceof ConcurrentModificationError)) throw err;
  }
}

/**
 * Top-down marking, bottom-up removal: each child namespace is itself marked `dropping` before
 * its own children are listed, so a create racing anywhere in the subtree withdraws itself.
 */
async function cascadeChildren(services: CatalogServices, id: readonly string[], drop: NamespaceRecord['drop']): Promise<void> {
  const trash = drop?.trash;
  const store = services.registry.store;
  for (;;) {
    const [children, listed] = await Promise.all([
      store.list({ prefix: keys.childNamespacesPrefix(services.project, id), limit: 100 }),
      store.list({ prefix: keys.tablesPrefix(services.project, id), limit: 100 }),
    ]);
    // A table's rename mark (protocols/rename-marks.ts) is no table: settling the record beside
    // it removes it, and one a crash left goes with the rest of the subtree below.
    const tables = listed.objects.filter((obj) => parseTreeKey(services.project, obj.key) !== undefined);
    if (children.objects.length === 0 && tables.length === 0) break;
    for (const obj of children.objects) {
      const parsed = parseTreeKey(services.project, obj.key);
      if (!parsed) {
        // A child's drop mark: the child's own drop removes it; one a crash left goes with the parent.
        await removeQuietly(() => services.registry.remove(obj.key, obj.etag));
        continue;
      }
      await dropNamespace(services, { id: parsed.id, mode: 'skip', behavior: 'cascade', protectionChecked: true, trash, purge: drop?.purge });
      await crashPoint(services, 'namespace-drop:child-dropped');
    }
    for (const obj of tables) {
      await removeQuietly(() => removeTableForCascade(services, obj.key, obj.etag, drop));
      await crashPoint(services, 'namespace-drop:table-removed');
    }
  }
  // Whatever is still below sits in the directory of a namespace whose record is already gone
  // (an interrupted earlier drop); it has no parent, so it goes too.
  for (;;) {
    const rest = await store.list({ prefix: keys.subtree(services.project, id), limit: 100 });
    if (rest.objects.length === 0) return;
    for (const obj of rest.objects) {
      const parsed = parseTreeKey(services.project, obj.key);
      await removeQuietly(() =>
        parsed?.kind === 'table'
          ? removeTableForCascade(services, obj.key, obj.etag, drop)
          : services.registry.remove(obj.key, obj.etag),
      );
    }
  }
}

/** A record that changed or vanished meanwhile is seen again by the next listing pass. */
async function removeQuietly(remove: () => Promise<void>): Promise<void> {
  try {
    await remove();
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}
