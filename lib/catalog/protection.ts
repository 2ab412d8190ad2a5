import { InvalidTableStateError, NamespaceNotFoundError, TableNotFoundError } from '../errors.js';
import { ConditionFailedError } from '../ports/object-store.js';
import { keys, parseTreeKey } from '../registry/keys.js';
import type { NamespaceRecord, ProtectionRecord, TableRecord } from '../registry/records.js';
import type { CatalogServices } from './services.js';
import { fmtId, validateId } from './ids.js';

/**
 * Protection (docs/rules.md rules 3–4; docs/lifecycle.md). A protected namespace or table refuses
 * drop, deregister and rename (and a namespace refuses a cascade that would reach a protected
 * descendant) with 409 / code 19 naming it, unless the request says `force=true`. Force
 * overrides protection and nothing else: authorization has already run by the time a door asks.
 *
 * The record lives beside the object's (keys.protection) and carries the object's uid, so it
 * dies with its object even when nobody deletes it: a re-created name has a new uid.
 */

export type ProtectedKind = 'namespace' | 'table';

export interface ProtectionState {
  readonly id: string[];
  readonly kind: ProtectedKind;
  readonly protected: boolean;
  readonly set_at?: string;
  readonly set_by?: string;
}

async function liveUid(services: CatalogServices, kind: ProtectedKind, id: readonly string[]): Promise<string | undefined> {
  if (kind === 'namespace') {
    const found = await services.registry.read<NamespaceRecord>(keys.namespace(services.project, id));
    return found && found.value.state === 'active' ? found.value.uid : undefined;
  }
  const found = await services.registry.read<TableRecord>(keys.table(services.project, id));
  return found && (found.value.state === undefined || found.value.state === 'active') ? found.value.uid : undefined;
}

const notFound = (kind: ProtectedKind, id: readonly string[]) =>
  kind === 'namespace' ? new NamespaceNotFoundError(`namespace ${fmtId(id)} does not exist`) : new TableNotFoundError(`table ${fmtId(id)} does not exist`);

/** The protection door: `{"protected": true|false}` on a live object; idempotent. */
export async function setProtection(
  services: CatalogServices,
  input: { kind: ProtectedKind; id: readonly string[]; protected: boolean; principal: string },
): Promise<ProtectionState> {
  const { kind, id } = input;
  if (id.length === 0) throw notFound(kind, id);
  validateId(kind, id);
  const key = keys.protection(services.project, kind, id);
  return services.registry.retrying(`protect ${kind} ${fmtId(id)}`, async () => {
    const uid = await liveUid(services, kind, id);
    if (uid === undefined) throw notFound(kind, id);
    const current = await services.registry.read<ProtectionRecord>(key);
    if (!input.protected) {
      if (current) await services.registry.remove(key, current.etag);
      return { id: [...id], kind, protected: false };
    }
    if (current && current.value.uid === uid) return stateOf(current.value);
    // The object's own record learns first that it may be protected: the doors skip the
    // protection read for a record that says it cannot be (`mayBeProtected: false`).
    await (kind === 'table' ? flagTable(services, id, uid) : flagNamespace(services, id, uid));
    const record: ProtectionRecord = { kind: 'protection', object: kind, id: [...id], uid, setAt: services.now().toISOString(), setBy: input.principal };
    if (current) await services.registry.replace(key, record, current.etag);
    else await services.registry.create(key, record);
    // The object may have been dropped (and re-created) between the read and the write: only a
    // record naming the live uid protects anything, so re-check and withdraw a stale one.
    if ((await liveUid(services, kind, id)) !== uid) {
      await removeQuietly(services, key);
      throw notFound(kind, id);
    }
    return stateOf(record);
  });
}

/**
 * Sets `mayBeProtected` on the live table `uid` at `id` (a compare-and-swap: a drop or rename
 * that read the record before it loses its own conditional write and reads again, and so sees
 * the flag). ConditionFailedError when the table changed meanwhile: the caller retries.
 */
async function flagTable(services: CatalogServices, id: readonly string[], uid: string): Promise<void> {
  const key = keys.table(services.project, id);
  const found = await services.registry.read<TableRecord>(key);
  if (!found || found.value.uid !== uid || !(found.value.state === undefined || found.value.state === 'active')) {
    throw new ConditionFailedError(key, 'conflict');
  }
  if (found.value.mayBeProtected === true) return;
  await services.registry.replace<TableRecord>(key, { ...found.value, mayBeProtected: true }, found.etag);
}

/** flagTable for a namespace: DescribeNamespace reads the protection record once this is set. */
async function flagNamespace(services: CatalogServices, id: readonly string[], uid: string): Promise<void> {
  const key = keys.namespace(services.project, id);
  const found = await services.registry.read<NamespaceRecord>(key);
  if (!found || found.value.uid !== uid || found.value.state !== 'active') throw new ConditionFailedError(key, 'conflict');
  if (found.value.mayBeProtected === true) return;
  await services.registry.replace<NamespaceRecord>(key, { ...found.value, mayBeProtected: true }, found.etag);
}

/**
 * For the doors that refuse protected tables: the protection record of `table` at `id`, read
 * only when the table's record does not rule protection out (`mayBeProtected: false`), and not
 * at all when the request forces.
 */
export async function protectionOf(
  services: CatalogServices,
  id: readonly string[],
  table: TableRecord,
  force: boolean | undefined,
): Promise<ProtectionRecord | undefined> {
  if (force || table.mayBeProtected === false) return undefined;
  return readProtectionRecord(services, 'table', id);
}

/**
 * The protection record at an id, whoever it was written for: it protects the object only if its
 * uid is that object's (`record.uid === object.uid`). Doors read it beside the object's record.
 */
export async function readProtectionRecord(services: CatalogServices, kind: ProtectedKind, id: readonly string[]): Promise<ProtectionRecord | undefined> {
  return (await services.registry.read<ProtectionRecord>(keys.protection(services.project, kind, id)))?.value;
}

/** Whether the object with this uid is protected (a record of an earlier object does not count). */
export async function readProtection(services: CatalogServices, kind: ProtectedKind, id: readonly string[], uid: string): Promise<ProtectionState> {
  const record = await readProtectionRecord(services, kind, id);
  return record && record.uid === uid ? stateOf(record) : { id: [...id], kind, protected: false };
}

/** The GET side of the door: the live object's protection. */
export async function describeProtection(services: CatalogServices, kind: ProtectedKind, id: readonly string[]): Promise<ProtectionState> {
  validateId(kind, id);
  const uid = await liveUid(services, kind, id);
  if (uid === undefined) throw notFound(kind, id);
  return readProtection(services, kind, id, uid);
}

/** Refuses (409 / 19) when the object is protected and the request did not force. */
export async function assertUnprotected(
  services: CatalogServices,
  kind: ProtectedKind,
  id: readonly string[],
  uid: string,
  force: boolean,
  action: string,
): Promise<void> {
  if (force) return;
  const state = await readProtection(services, kind, id, uid);
  if (state.protected) throw protectedError(kind, id, action);
}

/**
 * Before a cascade drops anything: every protected, live descendant of namespace `id` (one LIST
 * of the protection subtree, then a read of each object it names to check the uid).
 */
export async function protectedDescendants(services: CatalogServices, id: readonly string[]): Promise<{ kind: ProtectedKind; id: string[] }[]> {
  const prefix = keys.protectionSubtree(services.project, id);
  const treeRoot = keys.subtree(services.project, []);
  const found: { kind: ProtectedKind; id: string[] }[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.store.list({ prefix, startAfter, limit: 1000 });
    for (const object of page.objects) {
      const parsed = parseTreeKey(services.project, treeRoot + object.key.slice(keys.protectionSubtree(services.project, []).length));
      if (!parsed) continue;
      const record = await services.registry.read<ProtectionRecord>(object.key);
      if (record && record.value.uid === (await liveUid(services, parsed.kind, parsed.id))) found.push({ kind: parsed.kind, id: parsed.id });
    }
    const last = page.objects.at(-1);
    if (!page.truncated || !last) return found;
    startAfter = last.key;
  }
}

/** Refuses a cascade that would reach a protected descendant, naming the first one. */
export async function assertNoProtectedDescendants(services: CatalogServices, id: readonly string[], force: boolean): Promise<void> {
  if (force) return;
  const [first, ...rest] = await protectedDescendants(services, id);
  if (first) {
    const more = rest.length > 0 ? ` (and ${rest.length} more protected descendant${rest.length === 1 ? '' : 's'})` : '';
    throw new InvalidTableStateError(
      `namespace ${fmtId(id)} cannot be dropped with cascade: ${first.kind} ${fmtId(first.id)} is protected${more}; ${PROTECTION_WAY_OUT}`,
    );
  }
}

/** After a forced rename: the table keeps its protection under its new name. */
export async function carryProtection(services: CatalogServices, from: readonly string[], to: readonly string[], record: ProtectionRecord): Promise<void> {
  const target = keys.protection(services.project, 'table', to);
  const existing = await services.registry.store.get(target);
  const moved: ProtectionRecord = { ...record, id: [...to] };
  if (existing) await services.registry.replace(target, moved, existing.etag);
  else await services.registry.create(target, moved);
  await removeQuietly(services, keys.protection(services.project, 'table', from));
}

/** After a forced drop: the records of the dropped objects go too (they protect nothing already). */
export async function clearProtection(services: CatalogServices, kind: ProtectedKind, id: readonly string[]): Promise<void> {
  await removeQuietly(services, keys.protection(services.project, kind, id));
}

export async function clearProtectionSubtree(services: CatalogServices, id: readonly string[]): Promise<void> {
  const prefix = keys.protectionSubtree(services.project, id);
  for (;;) {
    const page = await services.registry.store.list({ prefix, limit: 1000 });
    for (const object of page.objects) await removeQuietly(services, object.key);
    if (!page.truncated) return;
  }
}

/**
 * The way out of a protection refusal, naming who may take it: force counts only for a caller
 * who may unprotect (docs/lifecycle.md, "Force"), so the message never offers it to anyone else.
 */
export const PROTECTION_WAY_OUT = 'only a project administrator may unprotect it ({"protected": false} on its protection door) or override the protection with force=true';

export function protectedError(kind: ProtectedKind, id: readonly string[], action: string): Error {
  return new InvalidTableStateError(`${kind} ${fmtId(id)} is protected and cannot be ${action}; ${PROTECTION_WAY_OUT}`);
}

async function removeQuietly(services: CatalogServices, key: string): Promise<void> {
  const current = await services.registry.store.get(key);
  if (!current) return;
  try {
    await services.registry.remove(key, current.etag);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}

function stateOf(record: ProtectionRecord): ProtectionState {
  return { id: [...record.id], kind: record.object, protected: true, set_at: record.setAt, set_by: record.setBy };
}
