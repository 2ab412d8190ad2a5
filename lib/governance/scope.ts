import { InvalidInputError } from '../errors.js';
import type { NamedProjects } from './admission.js';

/**
 * The project a control-plane request addresses: the `project` body field or query parameter,
 * the project base URI (`/projects/{project}/v1/…`), or the deployment's default project.
 * Two sources that disagree are a mistake the caller should hear about.
 */
export function projectScope(projects: NamedProjects, defaultProject: string): string {
  if ('invalid' in projects) throw new InvalidInputError(projects.invalid);
  const named = new Set(projects.named);
  if (named.size > 1) {
    throw new InvalidInputError(`the request names more than one project: ${[...named].map((p) => JSON.stringify(p)).join(', ')}`);
  }
  return projects.named[0] ?? defaultProject;
}
