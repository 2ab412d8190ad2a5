import { ConditionFailedError } from '../../ports/object-store.js';
import { dropMarkedSegment, keys } from '../../registry/keys.js';
import type { CatalogServices } from '../services.js';

/**
 * A namespace's drop mark (keys.namespaceDropMark): written before its record is marked
 * `dropping` and removed after the drop is finished or undone, so every `dropping` record has
 * one beside it. ListNamespaces sees the marks in the LIST it makes anyway and reads only the
 * marked names, settling them the way DescribeNamespace does (docs/protocols.md, "Repair
 * paths"): no listing names a namespace that describes as 404. A mark left by a crash between
 * its write and the record's, or between the record's removal and its own, costs a listing one
 * read; the next drop of that name replaces or removes it.
 */
interface DropMark {
  readonly kind: 'namespace-drop-mark';
  /** The drop's nonce (NamespaceRecord.drop.nonce): only that drop removes it. */
  readonly nonce: string;
}

/** Writes (or takes over) the mark for the drop `nonce` is about to record. */
export async function putDropMark(services: CatalogServices, id: readonly string[], nonce: string): Promise<void> {
  const key = keys.namespaceDropMark(services.project, id);
  const mark: DropMark = { kind: 'namespace-drop-mark', nonce };
  await services.registry.retrying(`mark namespace drop ${id.join('.')}`, async () => {
    try {
      await services.registry.create(key, mark); // the usual case: no mark there, one PUT
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      const found = await services.registry.read<DropMark>(key);
      if (!found) throw err; // removed meanwhile: look again
      await services.registry.replace(key, mark, found.etag);
    }
  });
}

/**
 * Removes the mark of the drop `nonce`, once its record is gone or back to active. A mark another
 * drop took over (a later drop of the same name, before marking its record) stays.
 */
export async function clearDropMark(services: CatalogServices, id: readonly string[], nonce: string | undefined): Promise<void> {
  const key = keys.namespaceDropMark(services.project, id);
  const found = await services.registry.read<DropMark>(key);
  if (!found || (nonce !== undefined && found.value.nonce !== nonce)) return;
  try {
    await services.registry.remove(key, found.etag);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err; // taken over meanwhile: it is that drop's
  }
}

/**
 * After a restrict drop removed namespace `id` (it was empty but for marks): the marks its
 * children's crashed drops left in its directory go too, so nothing is left below a removed record.
 */
export async function clearDropMarksBelow(services: CatalogServices, id: readonly string[]): Promise<void> {
  const prefix = keys.childNamespacesPrefix(services.project, id);
  for (let startAfter: string | undefined; ; ) {
    const page = await services.registry.store.list({ prefix, startAfter, limit: 100 });
    for (const obj of page.objects) {
      if (dropMarkedSegment(obj.key.slice(prefix.length)) === undefined) continue;
      try {
        await services.registry.remove(obj.key, obj.etag);
      } catch (err) {
        if (!(err instanceof ConditionFailedError)) throw err;
      }
    }
    if (!page.truncated || page.objects.length === 0) return;
    startAfter = page.objects[page.objects.length - 1].key;
  }
}
