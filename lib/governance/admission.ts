import type { OperationDef } from '../contract/operations.js';
import type { Caller } from '../contract/request.js';

/**
 * What the guard needs to know about a request to admit it (lib/governance/guard.ts), decoded by
 * the operations layer (lib/operations/admission.ts), so authorization reads typed facts and not
 * the request's body or query (issue 25, "one shape per operation").
 */
export interface Admission {
  readonly operation: OperationDef;
  /** The decoded `{id}` path parameter (`[]` for the root namespace or doors without one). */
  readonly id: readonly string[];
  /** The route's other `{param}` segments (control-plane doors). */
  readonly params: Readonly<Record<string, string>>;
  readonly requestId: string;
  readonly caller?: Caller;
  /** The project a base URI (`/projects/{project}/v1/…`) names; absent on plain `/v1`. */
  readonly baseProject?: string;
  /** The projects the request names (lib/governance/scope.ts decides between them). */
  readonly projects: NamedProjects;
  /** CreateProject's `name` when it is a string: the project it would create. */
  readonly createsProject?: string;
  /**
   * Where the door creates something other than at `{id}` (lib/governance/destinations.ts):
   * only when every field naming it has the form the handler accepts.
   */
  readonly destination?: { readonly kind: 'table' | 'namespace'; readonly id: readonly string[] };
  /** Whether the request names `force` at all (query or body); its value is the handler's to parse. */
  readonly namesForce: boolean;
}

/**
 * The projects a request names, in order: its `project` body field, its `project` query
 * parameter, the project base URI. `invalid` when the body field is not a string: a 400, but only
 * for the doors that read the project from the request.
 */
export type NamedProjects = { readonly named: readonly string[] } | { readonly invalid: string };
