import type { CatalogServices } from '../catalog/services.js';
import type { OperationRequest, RequestGuard } from '../contract/request.js';
import type { Admission, NamedProjects } from '../governance/admission.js';
import type { Guard } from '../governance/guard.js';

/**
 * The router's guard (lib/contract/request.ts, RequestGuard) over the governance guard: the
 * request is decoded here into the facts authorization needs (lib/governance/admission.ts), so
 * nothing below the operations layer reads a body or a query (issue 25, "one shape per operation").
 */
export function admitting(guard: Guard): RequestGuard<CatalogServices> {
  return {
    authenticate: (http, operation) => guard.authenticate(http, operation),
    admit: (request, services) => guard.admit(admissionOf(request), services),
  };
}

export function admissionOf(request: OperationRequest): Admission {
  return {
    operation: request.operation,
    id: request.id,
    params: request.params ?? {},
    requestId: request.requestId,
    ...(request.caller ? { caller: request.caller } : {}),
    ...(request.project !== undefined ? { baseProject: request.project } : {}),
    projects: namedProjects(request),
    ...(typeof request.body.name === 'string' ? { createsProject: request.body.name } : {}),
    ...destination(request),
    namesForce: request.query.has('force') || request.body.force !== undefined,
  };
}

/** The `project` field (string or absent; `null` is absent), the `project` query parameter, the base URI. */
function namedProjects(request: OperationRequest): NamedProjects {
  const field = request.body.project;
  if (field !== undefined && field !== null && typeof field !== 'string') return { invalid: 'project must be a string' };
  const named = [field ?? undefined, request.query.get('project') ?? undefined, request.project];
  return { named: named.filter((p): p is string => p !== undefined) };
}

const stringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((p) => typeof p === 'string');
/** The handlers read `null` as "not given" (lib/operations/decode.ts); so must this. */
const given = (v: unknown): unknown => (v === null ? undefined : v);

/**
 * Where RenameTable, UndropTable and UndropNamespace create, when it differs from `{id}`
 * (lib/governance/destinations.ts). Only fields the handler would refuse (400, before anything is
 * written) yield none: every form the handler accepts is read here exactly as the handler reads it.
 */
function destination(request: OperationRequest): Pick<Admission, 'destination'> {
  const { body, id } = request;
  if (id.length === 0) return {};
  switch (request.operation.operationId) {
    case 'RenameTable':
    case 'UndropTable': {
      const name = given(body.new_table_name);
      const ns = given(body.new_namespace_id);
      if (name === undefined && ns === undefined) return {}; // undrop in place; a rename without a name is a 400
      if ((name !== undefined && typeof name !== 'string') || (ns !== undefined && !stringArray(ns))) return {}; // 400
      if (request.operation.operationId === 'RenameTable' && name === undefined) return {}; // 400: new_table_name is required
      return { destination: { kind: 'table', id: [...(stringArray(ns) ? ns : id.slice(0, -1)), typeof name === 'string' ? name : id[id.length - 1]] } };
    }
    case 'UndropNamespace': {
      const name = given(body.new_namespace_name);
      if (typeof name !== 'string') return {}; // in place, or a 400
      return { destination: { kind: 'namespace', id: [...id.slice(0, -1), name] } };
    }
    default:
      return {};
  }
}
