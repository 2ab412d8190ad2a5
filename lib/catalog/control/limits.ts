import { keys } from '../../registry/keys.js';
import type { ProjectLimits, ProjectRecord } from '../../registry/records.js';
import type { CatalogServices, DeploymentLimits } from '../services.js';
import { NO_QUOTAS, readQuotas, recountUsage, type QuotaView } from '../quotas.js';
import { forgetProject } from './project-cache.js';
import { requireProject } from './projects.js';

/**
 * The limits door (GetProjectLimits / SetProjectLimits, `GET|POST /v1/limits`; docs/governance.md,
 * "Limits and quotas"): a project's object quotas and request rate, its own where a platform
 * administrator set one, the deployment's default otherwise. They live on the project record,
 * which every request reads anyway (lib/catalog/control/project-cache.ts): other processes apply
 * a change within the cache's 30 s.
 */


export const NO_LIMITS: DeploymentLimits = { quotas: NO_QUOTAS, projectRate: { perSecond: 0, burst: 1 } };

/** What SetProjectLimits takes: a number sets the project's own, null goes back to the default, absent leaves it. */
export interface ProjectLimitsInput {
  readonly namespaces?: number | null;
  readonly tables?: number | null;
  readonly rate?: { readonly perSecond: number; readonly burst?: number } | null;
}

export interface ProjectLimitsView {
  readonly project: string;
  readonly namespaces: QuotaView;
  readonly tables: QuotaView;
  readonly rate: { readonly per_second: number | null; readonly burst: number | null; readonly source: 'project' | 'default' };
}

const defaultsOf = (services: CatalogServices) => services.limits ?? NO_LIMITS;

async function view(services: CatalogServices, own: ProjectLimits | undefined): Promise<ProjectLimitsView> {
  const defaults = defaultsOf(services);
  const quotas = await readQuotas(services, own, defaults.quotas);
  const rate = own?.rate ?? defaults.projectRate;
  return {
    project: services.project,
    ...quotas,
    rate: { per_second: rate.perSecond > 0 ? rate.perSecond : null, burst: rate.perSecond > 0 ? rate.burst : null, source: own?.rate ? 'project' : 'default' },
  };
}

export async function getProjectLimits(services: CatalogServices): Promise<ProjectLimitsView> {
  const found = await requireProject(services, services.project);
  return view(services, found.value.limits);
}

export async function setProjectLimits(services: CatalogServices, input: ProjectLimitsInput): Promise<ProjectLimitsView> {
  const project = services.project;
  const next = await services.registry.retrying(`set the limits of project ${JSON.stringify(project)}`, async () => {
    const found = await requireProject(services, project);
    const limits: Record<string, unknown> = { ...found.value.limits };
    for (const kind of ['namespaces', 'tables'] as const) {
      const value = input[kind];
      if (value === null) delete limits[kind];
      else if (value !== undefined) limits[kind] = value;
    }
    if (input.rate === null) delete limits.rate;
    else if (input.rate !== undefined) limits.rate = { perSecond: input.rate.perSecond, burst: input.rate.burst ?? Math.max(1, 2 * input.rate.perSecond) };
    const { limits: _old, ...rest } = found.value;
    const record: ProjectRecord = Object.keys(limits).length > 0 ? { ...rest, limits: limits as ProjectLimits } : rest;
    await services.registry.replace(keys.project(project), record, found.etag);
    forgetProject(services.registry, project);
    return record.limits;
  });
  // Every quota now in force starts from what exists (lib/catalog/quotas.ts, `recountUsage`).
  await recountUsage(services, next, defaultsOf(services).quotas);
  return view(services, next);
}
