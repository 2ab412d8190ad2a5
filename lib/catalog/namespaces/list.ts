import { NamespaceNotFoundError } from '../../errors.js';
import { dropMarkedSegment, encodeSegment, keys } from '../../registry/keys.js';
import type { CatalogServices } from '../services.js';
import { validateId } from '../ids.js';
import { requireNamespace } from './lookup.js';

/** ListNamespaces. */

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
 * (drop-marks.ts) is read and settled by the same rule as describe (requireNamespace),
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
