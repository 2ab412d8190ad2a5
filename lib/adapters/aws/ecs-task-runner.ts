/**
 * The task tier on ECS Fargate (docs/jobs.md, "Tiers"; infra/constructs/job-tasks.ts): one
 * RunTask per dispatch of a job, the dispatch's token as `clientToken` so that a retried call
 * never starts a second task; DescribeTasks for a task's fate, StopTask for a cancel.
 */
import {
  DescribeTasksCommand,
  ECSClient,
  RunTaskCommand,
  StopTaskCommand,
  type AssignPublicIp,
} from '@aws-sdk/client-ecs';
import { TaskRefusedError, type TaskRequest, type TaskRunner, type TaskState } from '../../ports/task-runner.js';

export { ECSClient };

export interface EcsTaskSettings {
  readonly cluster: string;
  readonly taskDefinition: string;
  /** The container that runs functions/job-task.ts; it receives the job id in its environment. */
  readonly container: string;
  readonly subnets: readonly string[];
  readonly securityGroups: readonly string[];
  /** Public subnets without a NAT gateway need a public IP to reach ECR, S3 and CloudWatch Logs. */
  readonly assignPublicIp: boolean;
}

export class EcsTaskRunner implements TaskRunner {
  readonly kind = 'ecs';

  constructor(
    private readonly client: ECSClient,
    private readonly settings: EcsTaskSettings,
  ) {}

  async start(request: TaskRequest): Promise<string> {
    const s = this.settings;
    let out;
    try {
      out = await this.client.send(
        new RunTaskCommand({
          cluster: s.cluster,
          taskDefinition: s.taskDefinition,
          launchType: 'FARGATE',
          count: 1,
          clientToken: request.token,
          startedBy: `rask-${request.jobId.slice(0, 24)}`,
          networkConfiguration: {
            awsvpcConfiguration: {
              subnets: [...s.subnets],
              securityGroups: [...s.securityGroups],
              assignPublicIp: (s.assignPublicIp ? 'ENABLED' : 'DISABLED') satisfies AssignPublicIp,
            },
          },
          overrides: {
            containerOverrides: [
              {
                name: s.container,
                environment: [
                  { name: 'RASK_JOB_ID', value: request.jobId },
                  { name: 'RASK_JOB_PROJECT', value: request.project },
                ],
              },
            ],
          },
        }),
      );
    } catch (err) {
      // Throttled, no capacity, a service error: no task was started (or, with the same token,
      // a retry would return it). The job spends no attempt either way.
      throw new TaskRefusedError(`RunTask failed: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    }
    const arn = out.tasks?.[0]?.taskArn;
    if (!arn) {
      const reasons = (out.failures ?? []).map((f) => `${f.reason ?? '?'}${f.detail ? ` (${f.detail})` : ''}`);
      throw new TaskRefusedError(`RunTask started no task: ${reasons.join('; ') || 'no reason given'}`);
    }
    return arn;
  }

  async describe(task: string): Promise<TaskState> {
    const out = await this.client.send(new DescribeTasksCommand({ cluster: this.settings.cluster, tasks: [task] }));
    const t = out.tasks?.[0];
    if (!t) return { status: 'missing', ...(out.failures?.[0]?.reason ? { stopReason: out.failures[0].reason } : {}) };
    if (t.lastStatus === 'STOPPED' || t.desiredStatus === 'STOPPED') {
      const exit = t.containers?.find((c) => c.name === this.settings.container) ?? t.containers?.[0];
      const parts = [t.stopCode, t.stoppedReason, exit?.exitCode !== undefined ? `exit code ${exit.exitCode}` : undefined, exit?.reason];
      return { status: 'stopped', stopReason: parts.filter(Boolean).join(': ') || 'stopped' };
    }
    return { status: t.lastStatus === 'RUNNING' ? 'running' : 'starting' };
  }

  async stop(task: string, reason: string): Promise<void> {
    try {
      await this.client.send(new StopTaskCommand({ cluster: this.settings.cluster, task, reason: reason.slice(0, 255) }));
    } catch (err) {
      // A task that already stopped (or never existed) is not an error for a cancel.
      if (err instanceof Error && /not found|InvalidParameter/i.test(`${err.name} ${err.message}`)) return;
      throw err;
    }
  }
}
