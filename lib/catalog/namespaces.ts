import {
  InvalidInputError,
  NamespaceAlreadyExistsError,
  NamespaceNotEmptyError,
  NamespaceNotFoundError,
} from '../errors.js';
import { ConditionFailedError } from '../ports/object-store.js';
import { encodeSegment, keys, parseTreeKey, validateName } from '../registry/keys.js';
import type { NamespaceRecord } from '../registry/records.js';
import type { Versioned } from '../registry/registry.js';
import type { CatalogServices } from './services.js';
import { removeTableForCascade } from './tables/cascade.js';

/** An object id as error messages show it. */
export const fmtId = (id: readonly string[]) => JSON.stringify(id);

export function validateId(kind: 'namespace' | 'table', id: readonly string[]): void {
  id.forEach((part, i) => validateName(i === id.length - 1 ? kind : 'namespace', part));
}

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
  const found = await readNamespace(services, id);
  if (!found || found.value.state !== 'active') {
    throw new NamespaceNotFoundError(`namespace ${fmtId(id)} does not exist${hint}`);
  }
  return found;
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
): Promise<void> {
  if (parent.length === 0) return;
  const now = await readNamespace(services, parent);
  if (now && now.value.state === 'active') return;
  try {
    await services.registry.remove(childKey, childEtag);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err; // a cascade already removed it
  }
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
      if (mode === 'create' || existing.value.state !== 'active') {
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
): Promise<{ properties: Record<string, string> }> {
  if (id.length === 0) return { properties: {} };
  validateId('namespace', id);
  const found = await requireNamespace(services, id);
  return { properties: { ...found!.value.properties } };
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
  const [, page] = await Promise.all([
    requireNamespace(services, input.id),
    services.registry.listNames(keys.childNamespacesPrefix(services.project, input.id), {
      startAfter: input.pageToken,
      limit: input.limit,
      encode: encodeSegment,
    }),
  ]);
  return page.more
    ? { namespaces: page.names, page_token: page.names[page.names.length - 1] }
    : { namespaces: page.names };
}

export type DropMode = 'fail' | 'skip';
export type DropBehavior = 'restrict' | 'cascade';

export async function dropNamespace(
  services: CatalogServices,
  input: { id: readonly string[]; mode: DropMode; behavior: DropBehavior },
): Promise<{ properties?: Record<string, string> }> {
  const { id } = input;
  if (id.length === 0) throw new InvalidInputError('the root namespace cannot be dropped');
  validateId('namespace', id);
  const marked = await markDropping(services, id);
  if (!marked) {
    if (input.mode === 'skip') return {};
    throw new NamespaceNotFoundError(`namespace ${fmtId(id)} does not exist`);
  }
  if (input.behavior === 'restrict') {
    const contents = await describeContents(services, id);
    if (contents) {
      await unmarkDropping(services, id);
      throw new NamespaceNotEmptyError(`namespace ${fmtId(id)} is not empty: it contains ${contents}`);
    }
  } else {
    await cascadeChildren(services, id);
  }
  await removeMarked(services, id);
  return { properties: { ...marked.value.properties } };
}

/** CAS the record to `dropping`; re-entrant so an interrupted drop can be finished. */
async function markDropping(services: CatalogServices, id: readonly string[]) {
  const key = keys.namespace(services.project, id);
  return services.registry.retrying(`drop namespace ${fmtId(id)}`, async () => {
    const found = await readNamespace(services, id);
    if (!found) return undefined;
    if (found.value.state === 'dropping') return found;
    const record: NamespaceRecord = { ...found.value, state: 'dropping' };
    return { value: record, etag: await services.registry.replace(key, record, found.etag) };
  });
}

async function unmarkDropping(services: CatalogServices, id: readonly string[]): Promise<void> {
  const key = keys.namespace(services.project, id);
  await services.registry.retrying(`restore namespace ${fmtId(id)}`, async () => {
    const found = await readNamespace(services, id);
    if (!found || found.value.state === 'active') return;
    await services.registry.replace(key, { ...found.value, state: 'active' }, found.etag);
  });
}

async function removeMarked(services: CatalogServices, id: readonly string[]): Promise<void> {
  const key = keys.namespace(services.project, id);
  await services.registry.retrying(`drop namespace ${fmtId(id)}`, async () => {
    const found = await readNamespace(services, id);
    if (found) await services.registry.remove(key, found.etag);
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
    const rest = await services.registry.store.list({ prefix: keys.subtree(services.project, id), limit: 1 });
    if (rest.objects.length) return `objects such as ${rest.objects[0].key}`;
    return undefined;
  }
  return parts.join(' and ');
}

/**
 * Top-down marking, bottom-up removal: each child namespace is itself marked `dropping` before
 * its own children are listed, so a create racing anywhere in the subtree withdraws itself.
 */
async function cascadeChildren(services: CatalogServices, id: readonly string[]): Promise<void> {
  const store = services.registry.store;
  for (;;) {
    const [children, tables] = await Promise.all([
      store.list({ prefix: keys.childNamespacesPrefix(services.project, id), limit: 100 }),
      store.list({ prefix: keys.tablesPrefix(services.project, id), limit: 100 }),
    ]);
    if (children.objects.length === 0 && tables.objects.length === 0) break;
    for (const obj of children.objects) {
      const parsed = parseTreeKey(services.project, obj.key);
      if (parsed) await dropNamespace(services, { id: parsed.id, mode: 'skip', behavior: 'cascade' });
    }
    for (const obj of tables.objects) await removeQuietly(() => removeTableForCascade(services, obj.key, obj.etag));
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
          ? removeTableForCascade(services, obj.key, obj.etag)
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
