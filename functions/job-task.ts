/**
 * The task tier's container entry (docs/jobs.md, "Tiers"): runs one job, `RASK_JOB_ID` of
 * project `RASK_JOB_PROJECT`, with the Jobs function's worker and runners, then exits. On AWS
 * (`RASK_TASK_PLATFORM=aws`, set by the task definition: infra/constructs/job-tasks.ts) it is
 * the Fargate task's command; locally the server starts it as a child process
 * (lib/adapters/local/child-task-runner.ts), so a native crash ends the child, not the server.
 *
 * Exit codes: 0 (succeeded, retrying, released, or nothing to run), 1 (failed), 2 (could not
 * start). The exit ends any LanceDB step still running after the maximum duration.
 */
import { hostname } from 'node:os';
import type { CatalogServices } from '../lib/catalog/services.js';
import { runJobTask } from '../lib/app/job-task.js';
import { dataRunners } from '../lib/jobs/runners/index.js';
import { maintenanceRunners } from '../lib/maintenance/table-jobs.js';

/** Default maximum duration of a task: 8 hours (rask:jobsTaskMaxMinutes sets it on AWS). */
const DEFAULT_LIMIT_MS = 8 * 3_600_000;

const log = (entry: Record<string, unknown>) => console.error(JSON.stringify({ level: 'info', component: 'job-task', ...entry }));

async function services(): Promise<CatalogServices> {
  if (process.env.RASK_TASK_PLATFORM === 'aws') {
    // Services only (no router): a job task serves no request and authorizes nothing.
    const [{ createAwsServices }, { loadAwsConfig }, { lanceDataPlane }] = await Promise.all([
      import('../lib/app/aws-services.js'),
      import('../lib/config.js'),
      import('../lib/adapters/lance/data-plane.js'),
    ]);
    return createAwsServices(loadAwsConfig(), undefined, { engine: lanceDataPlane().engine });
  }
  const [{ createLocalApp }, { loadLocalConfig }] = await Promise.all([import('../lib/app/local.js'), import('../lib/config.js')]);
  // The local server hands its own configuration over whole (lib/app/server.ts), so the child
  // opens exactly the server's data directory whatever the server was started with.
  const handed = process.env.RASK_TASK_CONFIG_JSON;
  const config = handed ? (JSON.parse(handed) as ReturnType<typeof loadLocalConfig>) : loadLocalConfig();
  return (await createLocalApp(config, { handlers: {} })).services;
}

async function main(): Promise<number> {
  const jobId = process.env.RASK_JOB_ID;
  const project = process.env.RASK_JOB_PROJECT;
  if (!jobId || !project) {
    log({ message: 'RASK_JOB_ID and RASK_JOB_PROJECT must be set' });
    return 2;
  }
  const limitMs = Number(process.env.RASK_JOB_TASK_MAX_MS ?? DEFAULT_LIMIT_MS);
  const stop = new AbortController();
  // StopTask (a cancel) and a local server's stop send SIGTERM: give the job back, then exit.
  process.once('SIGTERM', () => stop.abort('shutdown'));
  const result = await runJobTask(await services(), {
    jobId,
    project,
    owner: `task:${process.env.ECS_CONTAINER_METADATA_URI_V4 ? hostname() : `${hostname()}:${process.pid}`}`,
    limitMs: Number.isFinite(limitMs) && limitMs > 0 ? limitMs : DEFAULT_LIMIT_MS,
    runners: { ...dataRunners, ...maintenanceRunners },
    log,
    signal: stop.signal,
  });
  log({ message: 'job task done', id: jobId, project, ...result });
  return result.exitCode;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log({ message: 'job task could not run', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    process.exit(2);
  },
);
