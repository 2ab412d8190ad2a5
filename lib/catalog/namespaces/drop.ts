import {
  ConcurrentModificationError,
  InvalidInputError,
  NamespaceAlreadyExistsError,
  NamespaceNotEmptyError,
  NamespaceNotFoundError,
} from '../../errors.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { dropMarkedSegment, encodeSegment, keys, parseTreeKey, validateName } from '../../registry/keys.js';
import type { NamespaceRecord, SubtreeDrop } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import { crashPoint } from '../crash-points.js';
import { clearDropMark, clearDropMarksBelow, putDropMark } from './drop-marks.js';
import type { CatalogServices } from '../services.js';
import { removeTableForCascade } from './cascade.js';
import { fileNamespace, subtreeDropFor } from './trash-records.js';
import { clearMarkerSubtree } from '../protocols/markers.js';
import { assertNoProtectedDescendants, clearProtection, clearProtectionSubtree, protectedError, readProtectionRecord } from '../protection.js';

import { fmtId, validateId } from '../ids.js';

export async function readNamespace(
  services: CatalogServices,
  id: readonly string[],
): Promise<Versioned<NamespaceRecord> | undefined> {
  return services.registry.read<NamespaceRecord>(keys.namespace(services.project, id));
}

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
  if (!found || found.value.state !== 'active') {
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

export type CreateMode = 'create' | 'exist_ok' | 'overwrite';

export async function createNamespace(
  services: CatalogServices,
  input: { id: readonly string[]; mode: CreateMode; properties: Record<string, string> },
): Promise<{ properties: Record<string, string> }> {
  const { id, mode, properties } = input;
  if (id.length === 0) throw new NamespaceAlreadyExistsError('the root namespace always exists');
  validateId('namespace', id);
  const key = keys.namespace(services.project, id);
  const parentId = id.slice(0, -1);

  return services.registry.retrying(`create namespace ${fmtId(id)}`, async () => {
    const parent = await requireNamespace(services, parentId, '; create the parent namespace first');
    const record: NamespaceRecord = {
      kind: 'namespace',
      id: [...id],
      uid: services.newId(),
      warehouse: parent?.value.warehouse ?? services.defaultWarehouse,
      properties,
      // Every table ever in it keeps its has-data marker (tables/markers.ts).
      tableMarkers: true,
      // Only the protection door sets it (protection.ts): describe skips the protection read.
      mayBeProtected: false,
      state: 'active',
      createdAt: services.now().toISOString(),
    };
    let etag: string;
    try {
      etag = await services.registry.create(key, record);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      const existing = await readNamespace(services, id);
      if (!existing) throw err; // dropped between our write and read: try again
      if (existing.value.state === 'dropping') {
        // A drop that died (or is running) holds the name: settle it, then try again.
        await settleDrop(services, id, existing);
        throw err;
      }
      // Our own record, from an attempt whose answer was lost (issue #35): the create happened.
      if (existing.value.uid === record.uid) {
        await confirmParentOrWithdraw(services, parentId, key, existing.etag);
        return { properties: { ...properties } };
      }
      if (mode === 'create') {
        throw new NamespaceAlreadyExistsError(`namespace ${fmtId(id)} already exists`);
      }
      if (mode === 'exist_ok') return { properties: { ...existing.value.properties } };
      await dropNamespace(services, { id, mode: 'skip', behavior: 'cascade' });
      throw err; // re-run the create against the now-free name
    }
    await confirmParentOrWithdraw(services, parentId, key, etag);
    return { properties: { ...properties } };
  });
}

export async function describeNamespace(
  services: CatalogServices,
  id: readonly string[],
): Promise<{ properties: Record<string, string>; protected: boolean }> {
  if (id.length === 0) return { properties: {}, protected: false };
  validateId('namespace', id);
  // `protected` is ours (docs/lifecycle.md): a top-level field the spec's response schema admits
  // and clients ignore, never inside `properties` (user data). Its record is read only when the
  // namespace's record does not rule it out (`mayBeProtected`, as for tables): one GET.
  const found = (await requireNamespace(services, id))!;
  if (found.value.mayBeProtected === false) return { properties: { ...found.value.properties }, protected: false };
  const protection = await readProtectionRecord(services, 'namespace', id);
  return { properties: { ...found.value.properties }, protected: protection?.uid === found.value.uid };
}

export async function namespaceExists(services: CatalogServices, id: readonly string[]): Promise<void> {
  validateId('namespace', id);
  await requireNamespace(services, id);
}

export async function listNamespaces(
  services: CatalogServices,
  input: { id: readonly string[]; pageToken?: string; limit?: number },
): Promise<{ namespaces: string[]; page_token?: string }> {
  validateId('namespace', input.id);
  if (input.limit === 0) {
    await requireNamespace(services, input.id);
    return { namespaces: [] };
  }
  // The namespace check and the LIST are independent: one round trip for both.
  const marked = new Set<string>();
  const [, page] = await Promise.all([
    requireNamespace(services, input.id),
    services.registry.listNames(keys.childNamespacesPrefix(services.project, input.id), {
      startAfter: input.pageToken,
      limit: input.limit,
      encode: encodeSegment,
      onOther: (segment) => {
        const name = dropMarkedSegment(segment);
        if (name !== undefined) marked.add(name);
      },
    }),
  ]);
  const names = await withoutDropped(services, input.id, page.names, marked);
  // The token is the last name the LIST passed, listed or not: the next page starts after it.
  return page.more
    ? { namespaces: names, page_token: page.names[page.names.length - 1] }
    : { namespaces: names };
}

/**
 * The listed names that DescribeNamespace answers for: a name with a drop mark beside it
 * (namespace-drop-marks.ts) is read and settled by the same rule as describe (requireNamespace),
 * so a listing never names what a crash left mid-drop. Only marked names cost a read.
 */
async function withoutDropped(services: CatalogServices, parent: readonly string[], names: string[], marked: ReadonlySet<string>): Promise<string[]> {
  if (marked.size === 0) return names;
  const gone = new Set<string>();
  await Promise.all(
    names
      .filter((name) => marked.has(encodeSegment(name)))
      .map(async (name) => {
        try {
          await requireNamespace(services, [...parent, name]);
        } catch (err) {
          if (!(err instanceof NamespaceNotFoundError)) throw err;
          gone.add(name);
        }
      }),
  );
  return names.filter((name) => !gone.has(name));
}

export type DropMode = 'fail' | 'skip';
export type DropBehavior = 'restrict' | 'cascade';

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

const recordedBehavior = (r: NamespaceRecord): DropBehavior => r.drop?.behavior ?? 'restrict';

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
async function settleDrop(services: CatalogServices, id: readonly string[], marked: Versioned<NamespaceRecord>): Promise<void> {
  try {
    await finishDrop(services, id, marked.value);
  } catch (err) {
    // Undone (not empty), or decided differently by a concurrent request: either way settled.
    if (!(err instanceof NamespaceNotEmptyError) && !(err instanceof ConcurrentModificationError)) throw err;
  }
}

/**
 * CAS the record to `dropping`; an existing mark is returned as it is (its drop is joined). A
 * cascade in a warehouse with trash grace carries the subtree-drop context on its mark (the
 * outermost drop makes it, its descendants copy it), so an interrupted detach is finished as one.
 */
async function markDropping(
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
async function unmarkDropping(services: CatalogServices, id: readonly string[], nonce: string | undefined): Promise<void> {
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
async function removeMarked(services: CatalogServices, id: readonly string[], nonce: string | undefined, behavior: DropBehavior): Promise<void> {
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
async function describeContents(services: CatalogServices, id: readonly string[]): Promise<string | undefined> {
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
    // A drop mark left behind by a crash is not contents (namespace-drop-marks.ts).
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

/**
 * Top-down marking, bottom-up removal: each child namespace is itself marked `dropping` before
 * its own children are listed, so a create racing anywhere in the subtree withdraws itself.
 */
async function cascadeChildren(services: CatalogServices, id: readonly string[], drop: NamespaceRecord['drop']): Promise<void> {
  const trash = drop?.trash;
  const store = services.registry.store;
  for (;;) {
    const [children, tables] = await Promise.all([
      store.list({ prefix: keys.childNamespacesPrefix(services.project, id), limit: 100 }),
      store.list({ prefix: keys.tablesPrefix(services.project, id), limit: 100 }),
    ]);
    if (children.objects.length === 0 && tables.objects.length === 0) break;
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
    for (const obj of tables.objects) {
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

const isDropMarkKey = (key: string) => dropMarkedSegment(key.slice(key.lastIndexOf('/') + 1)) !== undefined;

/** A record that changed or vanished meanwhile is seen again by the next listing pass. */
async function removeQuietly(remove: () => Promise<void>): Promise<void> {
  try {
    await remove();
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}
