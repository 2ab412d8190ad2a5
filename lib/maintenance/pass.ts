import type { CatalogServices } from '../catalog/services.js';

/**
 * The shape every scheduled maintenance pass shares (sweep, index build, reconcile, orphan
 * scan), so the Lambda entries, the local timers and the `rask` CLI drive all four the same way.
 * Each pass lives in its own module under lib/maintenance/ and exports a `MaintenancePass`.
 */
export type PassName = 'sweep' | 'index' | 'reconcile' | 'orphans';

export interface PassScope {
  /** Only tables under this namespace (and its descendants). */
  readonly namespace?: readonly string[];
  /** Only this table. */
  readonly table?: readonly string[];
}

/** One-run policy overrides (CLI flags); they shadow the effective policy's fields for this run. */
export interface PolicyOverrides {
  readonly olderThanDays?: number;
  readonly retainVersions?: number;
}

export interface PassOptions {
  readonly scope?: PassScope;
  /** Report what would be done; change nothing. */
  readonly dryRun?: boolean;
  readonly overrides?: PolicyOverrides;
  /** Reconcile: run each door's own repair path for what it finds. */
  readonly repair?: boolean;
  /** Orphan scan: delete candidates older than the grace period, re-checking each first. */
  readonly delete?: boolean;
  /** Resume after this cursor (from a previous report's `cursor`). */
  readonly cursor?: string;
  /** Stop starting new units of work after this instant (epoch ms) and return a cursor. */
  readonly deadline?: number;
  /**
   * Sweep and index build: queue one job per table that needs work (lib/maintenance/fan-out.ts)
   * for the jobs worker, instead of doing the work in this run. The scheduled functions and the
   * local timers (when the job loop runs) set it; the CLI works in-process. Ignored by a dry run.
   */
  readonly fanOut?: boolean;
  /** Called as units of work finish, for a progress bar. */
  readonly onProgress?: (progress: { readonly done: number; readonly total?: number; readonly unit: string }) => void;
}

export interface PassReport {
  readonly pass: PassName;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** False when something could not be read: the report covers less than it was asked to. */
  readonly complete: boolean;
  /** Set when the pass stopped at its deadline: pass it back to continue. */
  readonly cursor?: string;
  /** Counters for the run (tables visited, fragments before/after, bytes reclaimed, …). */
  readonly summary: Readonly<Record<string, number>>;
  /** One entry per unit that did material work, was skipped (with a reason) or found something. */
  readonly items: readonly Readonly<Record<string, unknown>>[];
  /** What could not be read or done, in words an operator can act on. */
  readonly problems: readonly string[];
  /** True when the run changed something (a run without material work stores only its summary). */
  readonly material?: boolean;
  /** Where the run's report was written (under the registry store's `reports/` prefix). */
  readonly reportKey?: string;
}

export type MaintenancePass = (services: CatalogServices, options: PassOptions) => Promise<PassReport>;

/** A finished run's report, stamped now; the cursor only when the run stopped at its deadline. */
export function finishReport(
  services: Pick<CatalogServices, 'now'>,
  run: Omit<PassReport, 'finishedAt' | 'cursor'> & { readonly cursor?: string | undefined },
): PassReport {
  const { cursor, ...rest } = run;
  return { ...rest, finishedAt: services.now().toISOString(), ...(cursor ? { cursor } : {}) };
}
