/**
 * The maintenance-policy doors (control plane, ours): read and set the policy record of a
 * project, a namespace or a table, and show the effective policy with the record that won.
 * Registry reads and writes only: no LanceDB, and setting a policy never touches the dataset
 * (so it never creates a table version).
 *
 * Check order (docs/rules.md rule 1): shape (400) → object exists (404) → write. A write is one
 * put-if-absent or put-if-match, retried on a lost race; a concurrent drop leaves an inert
 * record behind, because records are keyed by the object's uid and a re-created name has a new one.
 */
import type { CatalogServices } from '../catalog/services.js';
import { readNamespace } from '../catalog/namespaces/record.js';
import { requireNamespace } from '../catalog/namespaces/lookup.js';
import { fmtId } from '../catalog/ids.js';
import { readTable, validateTableId } from '../catalog/protocols/lookup.js';
import { NamespaceNotFoundError, TableNotFoundError } from '../errors.js';
import { keys } from '../registry/keys.js';
import type { TableRecord, WarehouseRecord } from '../registry/records.js';
import {
  chainFor,
  policyKeys,
  resolvePolicy,
  type EffectivePolicy,
  type PolicyChain,
  type PolicyFields,
  type PolicyRecord,
} from './policy.js';

export type PolicyTarget =
  | { readonly level: 'project' }
  | { readonly level: 'namespace'; readonly id: readonly string[] }
  | { readonly level: 'table'; readonly id: readonly string[] };

/** What every door answers: the record set here (or null), the effective policy and its source. */
export interface PolicyView {
  readonly level: 'project' | 'namespace' | 'table';
  readonly id?: readonly string[];
  readonly policy: PolicyFields | null;
  readonly effective: EffectivePolicy['policy'];
  readonly source: EffectivePolicy['source'];
}

/** The root namespace (`[]`) is the project: the spec's tree has the project at its root. */
function normalise(target: PolicyTarget): PolicyTarget {
  return target.level === 'namespace' && target.id.length === 0 ? { level: 'project' } : target;
}

interface Located {
  readonly key: string;
  readonly chain: PolicyChain;
  readonly id?: readonly string[];
  readonly uid?: string;
}

async function locate(services: CatalogServices, target: PolicyTarget): Promise<Located> {
  const { registry, project } = services;
  const readNs = async (id: readonly string[]) => (await readNamespace(services, id))?.value;
  const readWh = async (name: string) => (await registry.read<WarehouseRecord>(keys.warehouse(project, name)))?.value;
  if (target.level === 'project') {
    const warehouse = await readWh(services.defaultWarehouse);
    return { key: policyKeys.project(project), chain: { project, namespaces: [], ...(warehouse ? { warehouse } : {}) } };
  }
  if (target.level === 'namespace') {
    const found = await requireNamespace(services, target.id);
    const chain = await chainFor(project, { namespace: target.id }, readNs, readWh);
    return { key: policyKeys.namespace(project, found!.value.uid), chain, id: target.id, uid: found!.value.uid };
  }
  validateTableId(target.id);
  const table = await liveTable(services, target.id);
  let chain: PolicyChain;
  try {
    chain = await chainFor(project, { table }, readNs, readWh);
  } catch (err) {
    if (err instanceof NamespaceNotFoundError) throw new TableNotFoundError(`table ${fmtId(target.id)} does not exist`);
    throw err;
  }
  return { key: policyKeys.table(project, table.uid), chain, id: target.id, uid: table.uid };
}

async function liveTable(services: CatalogServices, id: readonly string[]): Promise<TableRecord> {
  const found = await readTable(services, id);
  if (!found) throw new TableNotFoundError(`table ${fmtId(id)} does not exist`);
  return found.value;
}

async function view(services: CatalogServices, target: PolicyTarget, located: Located): Promise<PolicyView> {
  const own = await services.registry.read<PolicyRecord>(located.key);
  const effective = await resolvePolicy(services.registry, located.chain);
  return {
    level: target.level,
    ...(located.id ? { id: located.id } : {}),
    policy: own?.value.policy ?? null,
    effective: effective.policy,
    source: effective.source,
  };
}

export async function getMaintenancePolicy(services: CatalogServices, target: PolicyTarget): Promise<PolicyView> {
  const t = normalise(target);
  return view(services, t, await locate(services, t));
}

/**
 * Sets (`fields` an object) or clears (`fields` null) the record at one level. The door has
 * decoded and checked the policy before anything is read (lib/operations/handlers-maintenance.ts),
 * so nothing is written when it is invalid.
 */
export async function setMaintenancePolicy(services: CatalogServices, target: PolicyTarget, fields: PolicyFields | null): Promise<PolicyView> {
  const t = normalise(target);
  const located = await locate(services, t);
  const record: PolicyRecord | null =
    fields === null
      ? null
      : {
          kind: 'maintenance-policy',
          level: t.level,
          project: services.project,
          ...(located.id ? { id: located.id } : {}),
          ...(located.uid ? { uid: located.uid } : {}),
          policy: fields,
          updatedAt: services.now().toISOString(),
        };
  await services.registry.retrying('setting a maintenance policy', async () => {
    const current = await services.registry.read<PolicyRecord>(located.key);
    if (record === null) {
      if (current) await services.registry.remove(located.key, current.etag);
    } else if (current) {
      await services.registry.replace(located.key, record, current.etag);
    } else {
      await services.registry.create(located.key, record);
    }
  });
  return view(services, t, located);
}
