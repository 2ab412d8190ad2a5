import type { CatalogServices } from '../catalog/services.js';
import { createRouter, type Router } from '../http/router.js';
import type { ErrorLogger } from '../http/respond.js';
import type { RequestLimits } from '../http/limits.js';
import type { HandlerMap } from '../contract/request.js';
import { UNSUPPORTED_REASONS } from '../contract/unsupported.js';
import { auditDenied, withEvents } from '../operations/emit.js';
import { guardFor } from '../governance/guard.js';
import { admitting } from '../operations/admission.js';
import type { GuardSettings } from '../governance/settings.js';
import { cachedProject } from '../catalog/control/project-cache.js';
import { ObjectStoreIdempotency } from '../registry/idempotency-records.js';
import { DEFAULT_COMMIT_DEADLINE_MS } from '../deadline.js';
import { type Limiter, NO_RATES, RateLimiter } from '../http/rate-limit.js';
import { SharedRateLimiter } from '../http/shared-rate-limit.js';
import type { RateBucketStore } from '../ports/rate-buckets.js';
import { cachedPrincipal } from '../catalog/control/principal-cache.js';
import { quotaAdmission } from '../operations/quota-admission.js';
import { buildServices, type ServiceOptions } from './services-build.js';

// What the entry points and tests import from here; defined beside buildServices (no router there).
export { consoleLogger, type DataPlane, decisionLog } from './services-build.js';

/** buildServices' options, and what only the router needs (lib/app/services-build.ts has the rest). */
export interface BuildOptions extends ServiceOptions {
  readonly handlers: HandlerMap<CatalogServices>;
  readonly maxBodyBytes: number;
  /** JSON depth and properties caps (lib/http/limits.ts); absent: the defaults. */
  readonly requestLimits?: RequestLimits;
  readonly logger?: ErrorLogger;
  /** Per-request commit deadline (RASK_COMMIT_DEADLINE_MS). */
  readonly commitDeadlineMs?: number;
  /** Authentication and authorization (docs/governance.md); absent: off. */
  readonly auth?: GuardSettings;
  /** How long an Idempotency-Key's answer is kept (RASK_IDEMPOTENCY_TTL_SECONDS); absent: keys are ignored. */
  readonly idempotencyTtlSeconds?: number;
  /**
   * Buckets shared by every container of the deployment (lib/http/shared-rate-limit.ts): on AWS
   * the work-queue table; absent (locally): each process keeps its own buckets.
   */
  readonly rateBuckets?: RateBucketStore;
  /** Local directories that never appear in an error body (the data directory). */
  readonly redactPaths?: readonly string[];
  /** The clock of idempotency keys and rate limits (tests); default the system's. */
  readonly now?: () => Date;
}

/** Wires ports into services and services into the router; shared by every entry point. */
export async function buildApp(options: BuildOptions): Promise<{ router: Router; services: CatalogServices }> {
  const services = await buildServices(options);
  const registry = services.registry;
  const router = createRouter({
    handlers: options.events ? withEvents(options.handlers, options.events) : options.handlers,
    services,
    maxBodyBytes: options.maxBodyBytes,
    ...(options.requestLimits ? { requestLimits: options.requestLimits } : {}),
    ...(options.traceRequests && options.logger?.debug ? { trace: options.logger as Required<Pick<ErrorLogger, 'debug'>> } : {}),
    logger: options.logger,
    unsupportedReasons: UNSUPPORTED_REASONS,
    commitDeadlineMs: options.commitDeadlineMs,
    guard: admitting(guardFor(options.auth ?? { mode: 'off' }, services)),
    onDenied: options.events
      ? auditDenied(options.events, options.project, async (project) => (await cachedProject(registry, project)) !== undefined)
      : undefined,
    ...(options.redactPaths ? { redactPaths: options.redactPaths } : {}),
    // Always on: a platform administrator may give any project a quota at run time (one read per create).
    quotas: quotaAdmission,
    // Always on, like quotas: a project may have its own rate (POST /v1/limits), read from the
    // project record the guard has just read (cached), so a request pays nothing for it.
    rateLimits: {
      limiter: limiterFor(options),
      projectOf: (scoped: CatalogServices) => scoped.project,
      projectRate: async (scoped: CatalogServices) => (await cachedProject(registry, scoped.project))?.limits?.rate,
      // A principal's own rate (SetPrincipalLimits), from its cached record: one GET per 30 s.
      principalRate: async (principal: string) => (await cachedPrincipal(registry, principal))?.limits?.rate,
    },
    // Kept beside the registry's records (a directory locally, the registry bucket on AWS). A
    // read-only process writes nothing, so it keeps no keys (its writes are refused anyway).
    ...(options.idempotencyTtlSeconds && !options.readOnly
      ? {
          idempotency: {
            store: new ObjectStoreIdempotency(options.registryStore),
            ttlMs: options.idempotencyTtlSeconds * 1000,
            leaseMs: idempotencyLeaseMs(options.commitDeadlineMs ?? DEFAULT_COMMIT_DEADLINE_MS),
            ...(options.now ? { now: options.now } : {}),
          },
        }
      : {}),
  });
  return { router, services };
}

/**
 * How long an unfinished idempotency claim blocks its key: twice the request's deadline and 30 s
 * more, so a request still running (a door stops at its deadline, Lambda at its timeout) is never
 * run a second time beside it, and a claim whose process died frees its key within ~80 s.
 */
export const idempotencyLeaseMs = (commitDeadlineMs: number): number => 2 * commitDeadlineMs + 30_000;

/** Shared buckets where the deployment has a store for them (AWS), else this process's own. */
function limiterFor(options: BuildOptions): Limiter {
  const limits = options.rateLimits ?? NO_RATES;
  const nowMs = options.now ? () => options.now!().getTime() : Date.now;
  if (!options.rateBuckets) return new RateLimiter(limits, nowMs);
  return new SharedRateLimiter(limits, {
    store: options.rateBuckets,
    nowMs,
    onStoreError: (err) => options.logger?.warn('shared rate buckets unreachable; this container limits on its own', { err: String(err) }),
  });
}
