import { InvalidInputError } from '../errors.js';
import { optionalString } from '../catalog/params.js';
import type { OperationRequest } from '../contract/request.js';

/**
 * The project a control-plane request addresses: the `project` body field or query parameter,
 * the project base URI (`/projects/{project}/v1/…`), or the deployment's default project.
 * Two sources that disagree are a mistake the caller should hear about.
 */
export function projectScope(request: OperationRequest, defaultProject: string): string {
  const fromBody = optionalString(request.body.project, 'project');
  const fromQuery = optionalString(request.query.get('project') ?? undefined, 'project');
  const named = [fromBody, fromQuery, request.project].filter((p): p is string => p !== undefined);
  if (new Set(named).size > 1) {
    throw new InvalidInputError(`the request names more than one project: ${[...new Set(named)].map((p) => JSON.stringify(p)).join(', ')}`);
  }
  return named[0] ?? defaultProject;
}
