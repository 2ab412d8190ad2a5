/**
 * The task tier on one machine (docs/jobs.md, "Tiers"; #34 item 6): each task is a child
 * process running the container's entry (functions/job-task.ts) for one job. A large build or
 * a native crash then takes down the child, never the server: the child's lease lapses and the
 * queue's protocol takes over, exactly as for a lost Fargate task.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { TaskRefusedError, type TaskRequest, type TaskRunner, type TaskState } from '../../ports/task-runner.js';

export interface ChildTaskSettings {
  /** The command and its arguments, e.g. `[process.execPath, '--import', 'tsx', 'functions/job-task.ts']`. */
  readonly command: readonly string[];
  /** The child's environment (the job id and project are added); default: this process's. */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Where the child's output goes; default: inherited (the server's own stderr). */
  readonly output?: (line: string) => void;
  /**
   * How long a stopped child has between SIGTERM and SIGKILL; default 30 s, the task
   * definition's `stopTimeout` (StopTask does the same on Fargate). A step inside LanceDB does
   * not see the SIGTERM's abort, so a child in one would otherwise run on after its cancel.
   */
  readonly killAfterMs?: number;
}

/** Fargate's StopTask grace in the task definition (infra/constructs/job-tasks.ts, stopTimeout). */
export const DEFAULT_KILL_AFTER_MS = 30_000;

interface Child {
  readonly process: ChildProcess;
  exit?: string;
}

export class ChildTaskRunner implements TaskRunner {
  readonly kind = 'child';
  private readonly children = new Map<string, Child>();
  private readonly byToken = new Map<string, string>();

  constructor(private readonly settings: ChildTaskSettings) {}

  async start(request: TaskRequest): Promise<string> {
    // Idempotent by token, like ECS's clientToken.
    const known = this.byToken.get(request.token);
    if (known) return known;
    const [cmd, ...args] = this.settings.command;
    if (!cmd) throw new TaskRefusedError('no task command configured');
    const output = this.settings.output;
    const child = spawn(cmd, args, {
      cwd: this.settings.cwd,
      env: { ...(this.settings.env ?? process.env), RASK_JOB_ID: request.jobId, RASK_JOB_PROJECT: request.project },
      stdio: ['ignore', output ? 'pipe' : 'inherit', output ? 'pipe' : 'inherit'],
    });
    const spawned = await new Promise<Error | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined));
      child.once('error', resolve);
    });
    if (spawned || child.pid === undefined) throw new TaskRefusedError(`could not start ${cmd}: ${String(spawned)}`);
    const handle = `pid:${child.pid}`;
    const entry: Child = { process: child };
    child.once('exit', (code, signal) => {
      entry.exit = signal ? `killed by ${signal}` : `exit code ${code}`;
    });
    if (output) {
      for (const stream of [child.stdout, child.stderr]) {
        let rest = '';
        stream?.setEncoding('utf8').on('data', (chunk: string) => {
          const lines = (rest + chunk).split('\n');
          rest = lines.pop() ?? '';
          for (const line of lines) output(line);
        });
      }
    }
    this.children.set(handle, entry);
    this.byToken.set(request.token, handle);
    return handle;
  }

  async describe(task: string): Promise<TaskState> {
    const child = this.children.get(task);
    if (!child) return { status: 'missing' };
    return child.exit === undefined ? { status: 'running' } : { status: 'stopped', stopReason: child.exit };
  }

  /** SIGTERM now (the entry gives its job back and exits), SIGKILL if it has not exited after the grace. */
  async stop(task: string, _reason: string): Promise<void> {
    const child = this.children.get(task);
    if (!child || child.exit !== undefined) return;
    child.process.kill('SIGTERM');
    const kill = setTimeout(() => {
      if (child.exit === undefined) child.process.kill('SIGKILL');
    }, this.settings.killAfterMs ?? DEFAULT_KILL_AFTER_MS);
    // Neither keeps a closing server alive nor outlives the child.
    kill.unref();
    child.process.once('exit', () => clearTimeout(kill));
  }

  /** Resolves once every child started so far has exited (a closing server, a test). */
  async settled(): Promise<void> {
    await Promise.all(
      [...this.children.values()].map((c) => (c.exit !== undefined ? undefined : new Promise((resolve) => c.process.once('exit', resolve)))),
    );
  }
}
