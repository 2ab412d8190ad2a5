import { NamespaceAlreadyExistsError, NamespaceNotEmptyError, NamespaceNotFoundError } from '../../errors.js';

/**
 * The spec has no codes for projects, warehouses, principals or keys; the control plane reuses
 * the container codes so one client error path serves the whole API (docs/governance.md):
 * missing → 1 (404), already exists → 2 (409), not empty → 3 (409).
 */
export const notFound = (what: string, hint = '') => new NamespaceNotFoundError(`${what} does not exist${hint}`);
export const alreadyExists = (what: string) => new NamespaceAlreadyExistsError(`${what} already exists`);
export const notEmpty = (what: string, contents: string) => new NamespaceNotEmptyError(`${what} is not empty: it contains ${contents}`);

export const q = (name: string) => JSON.stringify(name);

/** How each missing parent is created: a create door's 404 names the door (docs/rules.md rule 6). */
export const CREATE_HINT = {
  project: '; create it with POST /v1/projects {"name": …}',
  warehouse: '; create it with POST /v1/warehouses {"name": …, "storage_root": …}',
  principal: '; create it with POST /v1/principals {"name": …}',
  namespace: '; create it with CreateNamespace (POST /v1/namespace/{id}/create)',
} as const;
