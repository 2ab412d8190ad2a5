export interface Page {
  page_token?: string;
}

/** Byte order of the UTF-8 encodings, the order the spec's listings use. */
export function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * One page of `all` sorted by `key`: the spec's `page_token` is an exclusive start-after key,
 * `limit` an inclusive upper bound (0 ⇒ nothing), and a token is returned only when more items
 * follow.
 */
export function page<T>(all: readonly T[], key: (item: T) => string, paging: { readonly pageToken?: string; readonly limit?: number }): { items: T[] } & Page {
  const { pageToken: after, limit } = paging;
  const sorted = [...all].sort((a, b) => byteCompare(key(a), key(b)));
  const rest = after === undefined ? sorted : sorted.filter((item) => byteCompare(key(item), after) > 0);
  if (limit === undefined || rest.length <= limit) return { items: rest };
  const items = rest.slice(0, limit);
  return items.length === 0 ? { items } : { items, page_token: key(items[items.length - 1]) };
}
