/**
 * The job task image's build context (infra/constructs/job-tasks.ts), checked without Docker
 * (none on the build machine, so the image itself is never built here): the Dockerfile's CMD
 * names the bundled entry, the layer's lockfile keeps the x86_64 LanceDB binary, and the
 * bundled entry, run under node exactly as the CMD says with the repository's packages standing
 * in for `npm ci`, starts the worker and exits 0 for a job that is not there.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { writeJobTaskImageContext } from '../../infra/job-task-image.js';

const root = mkdtempSync(path.join(tmpdir(), 'rask-task-image-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('bundles an entry that the Dockerfile runs, and that runs the worker under node', () => {
  const dir = writeJobTaskImageContext(path.join(root, 'context'), true);
  const dockerfile = readFileSync(path.join(dir, 'Dockerfile'), 'utf8');
  expect(dockerfile).toMatch(/^FROM .*node:22-bookworm-slim$/m);
  const cmd = JSON.parse(/^CMD (.*)$/m.exec(dockerfile)?.[1] ?? 'null') as string[];
  expect(cmd[0]).toBe('node');
  const entry = cmd[cmd.length - 1]!;
  expect(existsSync(path.join(dir, 'app', entry))).toBe(true);
  const layer = JSON.parse(readFileSync(path.join(dir, 'layer', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  expect(Object.keys(layer.dependencies)).toEqual(expect.arrayContaining(['@lancedb/lancedb', '@lancedb/lancedb-linux-x64-gnu', 'apache-arrow']));

  // `COPY app/ ./` beside the layer's node_modules: here the repository's node_modules.
  symlinkSync(path.resolve('node_modules'), path.join(dir, 'app', 'node_modules'));
  const run = spawnSync(cmd[0]!, cmd.slice(1), {
    cwd: path.join(dir, 'app'),
    env: { PATH: process.env.PATH, RASK_JOB_ID: 'no-such-job', RASK_JOB_PROJECT: 'default', RASK_DATA_DIR: path.join(root, 'data') },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.stderr).toContain('job task found nothing to run');
  expect(run.status).toBe(0);
  // Without its job the entry refuses to start (exit 2), so the run above did reach the worker.
  const bare = spawnSync(cmd[0]!, cmd.slice(1), { cwd: path.join(dir, 'app'), env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 60_000 });
  expect(bare.status).toBe(2);
}, 120_000);
