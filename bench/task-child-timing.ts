/**
 * What the task-tier benches (bench/job-task-child.ts, bench/job-task-rewrite.ts) share: start a
 * job's task with a ChildTaskRunner of the bench's own, the command the local server uses
 * (functions/job-task.ts under tsx) behind `/usr/bin/time -v`, print the child's CPU seconds,
 * RSS and the load every 30 s (so a run stopped early still says how far it got), and report
 * the child's wall time, CPU seconds and peak RSS.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ChildTaskRunner } from '../lib/adapters/local/child-task-runner.js';
import type { LocalConfig } from '../lib/config.js';

const REPO = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

export interface ChildTiming {
  /** Spawn to exit, seconds. */
  readonly wallS: number;
  readonly userS: number;
  readonly sysS: number;
  readonly peakRssMiB: number;
  readonly stopReason: string | undefined;
  /** The child's output (its log lines and time(1)'s report), for an error message. */
  readonly lines: readonly string[];
}

export const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** Runs job `jobId` of project `default` in a timed child; `maxMinutes` becomes the task's maximum duration. */
export async function runTimedTask(config: LocalConfig, jobId: string, maxMinutes?: number): Promise<ChildTiming> {
  let peakKb = 0;
  const lines: string[] = [];
  const runner = new ChildTaskRunner({
    command: ['/usr/bin/time', '-v', process.execPath, '--import', 'tsx', path.join(REPO, 'functions', 'job-task.ts')],
    cwd: REPO,
    env: {
      ...process.env,
      RASK_TASK_CONFIG_JSON: JSON.stringify(config),
      ...(maxMinutes === undefined ? {} : { RASK_JOB_TASK_MAX_MS: String(Math.round(maxMinutes * 60_000)) }),
    },
    output: (line) => {
      lines.push(line);
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(line);
      if (rss) peakKb = Number(rss[1]);
    },
  });
  const t0 = performance.now();
  const task = await runner.start({ jobId, project: 'default', token: `${jobId}-bench` });
  const progress = setInterval(() => {
    const usage = childUsage(Number(task.slice('pid:'.length)));
    console.log(`progress ${((performance.now() - t0) / 1000).toFixed(0)} s: ${usage ? `child cpu ${usage.cpuSeconds.toFixed(1)} s, rss ${usage.rssMiB} MiB` : 'child not found'}; load ${load()}`);
  }, 30_000);
  await runner.settled();
  clearInterval(progress);
  const wallS = (performance.now() - t0) / 1000;
  const ended = await runner.describe(task);
  const seconds = (k: string) => Number(lines.find((l) => l.includes(k))?.split(': ').pop() ?? NaN);
  return {
    wallS,
    userS: seconds('User time (seconds)'),
    sysS: seconds('System time (seconds)'),
    peakRssMiB: Math.round(peakKb / 1024),
    stopReason: ended.stopReason,
    lines,
  };
}

/**
 * CPU seconds (user + sys) and RSS of the node process under `/usr/bin/time` (the runner's pid
 * is time's; the job runs in its only child), from /proc; undefined once it is gone.
 */
function childUsage(timePid: number): { cpuSeconds: number; rssMiB: number } | undefined {
  try {
    const child = readFileSync(`/proc/${timePid}/task/${timePid}/children`, 'utf8').trim().split(/\s+/)[0];
    if (!child) return undefined;
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${child}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child}/status`, 'utf8'))?.[1] ?? NaN);
    return { cpuSeconds: ticks / 100, rssMiB: Math.round(rssKb / 1024) };
  } catch {
    return undefined;
  }
}
