import type { HttpMethod, OperationDef } from '../contract/operations.js';

export interface RouteMatch {
  readonly operation: OperationDef;
  /** Raw (still encoded) values of the template's `{param}` segments. */
  readonly params: Readonly<Record<string, string>>;
  /** The raw path segments before `v1` (a base path such as `projects/acme`). */
  readonly base: readonly string[];
}

export type MatchResult =
  | { kind: 'found'; match: RouteMatch }
  | { kind: 'method-not-allowed'; allowed: readonly HttpMethod[] }
  | { kind: 'not-found' };

interface CompiledRoute {
  readonly operation: OperationDef;
  readonly segments: readonly string[];
  readonly literalCount: number;
}

/**
 * Normalizes what real clients send: a base-path prefix in front of `/v1` (a client configured
 * with `https://host/lance`), duplicate slashes (a configured uri ending in `/`), and trailing
 * slashes (`/v1/table/`). Returns the candidate segment lists starting at each `v1` segment
 * whose base is well formed (wellFormedBase).
 */
function candidatePaths(rawPath: string): { base: string[]; rest: string[] }[] {
  const segments = rawPath.split('/').filter((s) => s.length > 0);
  const out: { base: string[]; rest: string[] }[] = [];
  segments.forEach((s, i) => {
    if (s === 'v1' && wellFormedBase(segments.slice(0, i))) out.push({ base: segments.slice(0, i), rest: segments.slice(i) });
  });
  return out;
}

/**
 * A base path is never resolved like a file path, and never falls back to the default project
 * (docs/governance.md, "Names and limits"): a segment that is, or decodes to, `.` or `..`, one
 * that decodes to something holding `/` or `\`, or badly percent-encoded, makes the base
 * malformed, and so does a `projects` segment anywhere but just before the project's name
 * (`/projects//v1`, `/projects/a/x/v1`). A malformed base matches no route: 404.
 */
function wellFormedBase(base: readonly string[]): boolean {
  const decoded: string[] = [];
  for (const raw of base) {
    let part: string;
    try {
      part = decodeURIComponent(raw.replace(/\+/g, ' '));
    } catch {
      return false;
    }
    if (part === '.' || part === '..' || part.includes('/') || part.includes('\\')) return false;
    decoded.push(part);
  }
  const n = decoded.length;
  return decoded.every((part, i) => part !== 'projects' || i === n - 2 || (i === n - 1 && decoded[n - 2] === 'projects'));
}

export class RouteMatcher {
  private readonly routes: CompiledRoute[];

  constructor(operations: readonly OperationDef[]) {
    this.routes = operations
      .map((operation) => {
        const segments = operation.path.split('/').filter((s) => s.length > 0);
        return { operation, segments, literalCount: segments.filter((s) => !s.startsWith('{')).length };
      })
      // A literal segment beats a parameter (`/v1/table/version/batch-create` vs `{id}`).
      .sort((a, b) => b.literalCount - a.literalCount);
    const seen = new Set<string>();
    for (const r of this.routes) {
      const shape = r.segments.map((s) => (s.startsWith('{') ? '{}' : s)).join('/');
      for (const m of r.operation.methods) {
        const key = `${m} ${shape}`;
        if (seen.has(key)) throw new Error(`duplicate route ${key}`);
        seen.add(key);
      }
    }
  }

  match(method: string, rawPath: string): MatchResult {
    let allowed: HttpMethod[] | undefined;
    for (const { base, rest: candidate } of candidatePaths(rawPath)) {
      for (const route of this.routes) {
        const params = matchSegments(route.segments, candidate);
        if (!params) continue;
        if ((route.operation.methods as readonly string[]).includes(method)) {
          return { kind: 'found', match: { operation: route.operation, params, base } };
        }
        allowed = [...(allowed ?? []), ...route.operation.methods];
      }
    }
    return allowed ? { kind: 'method-not-allowed', allowed: [...new Set(allowed)] } : { kind: 'not-found' };
  }
}

function matchSegments(template: readonly string[], actual: readonly string[]): Record<string, string> | undefined {
  if (template.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const t = template[i];
    if (t.startsWith('{')) params[t.slice(1, -1)] = actual[i];
    else if (t !== actual[i]) return undefined;
  }
  return params;
}
