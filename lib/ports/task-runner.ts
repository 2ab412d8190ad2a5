/**
 * The task tier's runner (docs/jobs.md, "Tiers"): something that starts one container (or
 * process) for one job, tells whether it still lives, and stops it. The container runs the
 * same worker as the Jobs function (functions/job-task.ts): it claims, heartbeats and finishes
 * its job by the queue's own protocol, so the runner knows nothing of jobs beyond their id.
 *
 * Implementations: ECS Fargate RunTask (lib/adapters/aws/ecs-task-runner.ts) and a child
 * process of the local server (lib/adapters/local/child-task-runner.ts). A Batch-on-EC2 or a
 * Python runner would be a third.
 */

export interface TaskRequest {
  readonly jobId: string;
  readonly project: string;
  /**
   * The idempotency token: the job id and its dispatch count (`<id>-<n>`). Starting twice with
   * one token starts one task (ECS clientToken); a re-dispatch after the grace period has a new
   * token, since the first task is presumed lost.
   */
  readonly token: string;
}

export interface TaskState {
  /** `missing`: the runner does not know the task (never started, or forgotten long ago). */
  readonly status: 'starting' | 'running' | 'stopped' | 'missing';
  /** Why a stopped task stopped (ECS `stoppedReason`, a child's exit code or signal). */
  readonly stopReason?: string;
}

/**
 * The runner would not start the task (throttled, no capacity, a bad subnet). Nothing runs, so
 * the job spends no attempt: its dispatch stamp is taken back and a later pass tries again.
 */
export class TaskRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskRefusedError';
  }
}

export interface TaskRunner {
  /** Shown in `rask.task` beside the handle, e.g. `ecs` or `child`. */
  readonly kind: string;
  /** Starts one task for the job; resolves with its handle. Throws TaskRefusedError when refused. */
  start(request: TaskRequest): Promise<string>;
  describe(task: string): Promise<TaskState>;
  /** Best effort: a task already gone is not an error. */
  stop(task: string, reason: string): Promise<void>;
}
