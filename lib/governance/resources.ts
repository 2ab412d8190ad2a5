import type { OperationDef } from '../contract/operations.js';
import type { Uid, ResourceChain } from './policy-engine.js';
import type { GrantScope } from '../registry/principal-records.js';

/**
 * What each operation acts on, as a Cedar resource with its ancestors. Ids of namespaces and
 * tables are the JSON of `[project, ...id]`, so they are unique across projects and no name
 * can forge another's.
 */

export const projectUid = (project: string): Uid => ({ type: 'Project', id: project });
export const namespaceUid = (project: string, id: readonly string[]): Uid => ({ type: 'Namespace', id: JSON.stringify([project, ...id]) });
export const tableUid = (project: string, id: readonly string[]): Uid => ({ type: 'Table', id: JSON.stringify([project, ...id]) });
export const warehouseUid = (project: string, name: string): Uid => ({ type: 'Warehouse', id: JSON.stringify([project, name]) });
export const PLATFORM_UID: Uid = { type: 'Platform', id: 'rask' };

/** The namespaces above (and including) `id`, nearest first, then the project. */
function namespaceAncestors(project: string, id: readonly string[]): Uid[] {
  const out: Uid[] = [];
  for (let n = id.length; n >= 1; n--) out.push(namespaceUid(project, id.slice(0, n)));
  out.push(projectUid(project), PLATFORM_UID);
  return out;
}

export function namespaceChain(project: string, id: readonly string[]): ResourceChain {
  if (id.length === 0) return { resource: projectUid(project), ancestors: [PLATFORM_UID] };
  const [resource, ...ancestors] = namespaceAncestors(project, id);
  return { resource, ancestors };
}

export function tableChain(project: string, id: readonly string[]): ResourceChain {
  return { resource: tableUid(project, id), ancestors: namespaceAncestors(project, id.slice(0, -1)) };
}

export const projectChain = (project: string): ResourceChain => ({ resource: projectUid(project), ancestors: [PLATFORM_UID] });

export function scopeUid(project: string, scope: GrantScope): Uid {
  if (scope.kind === 'namespace') return namespaceUid(project, scope.id);
  if (scope.kind === 'table') return tableUid(project, scope.id);
  return projectUid(project);
}

/** Which kind of object a spec operation's `{id}` names. */
export function targetKind(operation: OperationDef): 'namespace' | 'table' | 'project' {
  if (operation.path.startsWith('/v1/namespace/')) return 'namespace';
  if (operation.path.startsWith('/v1/table/{id}') || operation.path.startsWith('/v1/materialized_view/{id}')) return 'table';
  return 'project';
}
