import { validateName } from '../registry/keys.js';

/**
 * Object-id helpers that namespaces, tables and the lifecycle doors all use. They live here, not
 * in the namespace doors (namespaces/*.ts), so that modules below those doors need not import
 * them (which made namespaces ↔ tables an import cycle).
 */

/** An object id as error messages show it. */
export const fmtId = (id: readonly string[]) => JSON.stringify(id);

/** Every part a valid namespace name, the last one of `kind`. */
export function validateId(kind: 'namespace' | 'table', id: readonly string[]): void {
  id.forEach((part, i) => validateName(i === id.length - 1 ? kind : 'namespace', part));
}
