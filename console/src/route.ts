/**
 * Deep links (docs/console.md): every object has a URL, in the fragment so that no server
 * route is needed and nothing after `#` is ever sent or logged. Segments are URI-encoded, so
 * any name round-trips.
 */
export type Route =
  | { readonly view: 'projects' }
  | { readonly view: 'project'; readonly project: string }
  | { readonly view: 'warehouse'; readonly project: string; readonly warehouse: string }
  | { readonly view: 'namespace'; readonly project: string; readonly id: readonly string[] }
  | { readonly view: 'table'; readonly project: string; readonly id: readonly string[] }
  | { readonly view: 'trash' | 'jobs' | 'reports' | 'changes' | 'admin'; readonly project: string };

const OPS = ['trash', 'jobs', 'reports', 'changes', 'admin'] as const;

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '').map(safeDecode);
  if (parts[0] !== 'p' || parts.length < 2) return { view: 'projects' };
  const project = parts[1]!;
  const [kind, ...rest] = parts.slice(2);
  if (kind === undefined) return { view: 'project', project };
  if (kind === 'w' && rest.length === 1) return { view: 'warehouse', project, warehouse: rest[0]! };
  if (kind === 'ns' && rest.length > 0) return { view: 'namespace', project, id: rest };
  if (kind === 't' && rest.length > 0) return { view: 'table', project, id: rest };
  if ((OPS as readonly string[]).includes(kind) && rest.length === 0) return { view: kind as (typeof OPS)[number], project };
  return { view: 'project', project };
}

export function href(route: Route): string {
  const seg = (s: string) => encodeURIComponent(s);
  switch (route.view) {
    case 'projects':
      return '#/';
    case 'project':
      return `#/p/${seg(route.project)}`;
    case 'warehouse':
      return `#/p/${seg(route.project)}/w/${seg(route.warehouse)}`;
    case 'namespace':
      return `#/p/${seg(route.project)}/ns/${route.id.map(seg).join('/')}`;
    case 'table':
      return `#/p/${seg(route.project)}/t/${route.id.map(seg).join('/')}`;
    default:
      return `#/p/${seg(route.project)}/${route.view}`;
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** How an id reads on a page: parts joined by dots, the way the CLI names tables. */
export const dotted = (id: readonly string[]) => id.join('.');
