import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll } from 'vitest';

/** A local server in a child process (so a test can SIGKILL it), ready once it printed `READY <url>`. */
export interface SpawnedServer {
  proc: ChildProcess;
  url: string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** The tail of its stderr (error lines carry request ids). */
  stderr: () => string;
}

export async function spawnServer(script: string, env: NodeJS.ProcessEnv): Promise<SpawnedServer> {
  const proc = spawn(process.execPath, ['--import', 'tsx', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /READY (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (code) => reject(new Error(`server exited (${code}) before it was ready: ${stderr}`)));
  });
  return { proc, url, exited, stderr: () => stderr };
}

/**
 * One JSON request to a server that may kill itself mid-request (the kill switch): undefined when
 * the connection died. The `$` delimiter is added to the path's query.
 */
export async function callUnlessKilled(url: string, method: string, p: string, body?: unknown): Promise<{ status: number; json: any } | undefined> {
  try {
    const res = await fetch(`${url}${p}${p.includes('?') ? '&' : '?'}delimiter=%24`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
    });
    return { status: res.status, json: await res.json() };
  } catch {
    return undefined;
  }
}

/**
 * Kill-switch servers (kill-switch-server.ts) on data directories of the test's own: `start` one
 * (SIGKILLed by itself after the registry write `killAfter` names, when given), `stop` one, and
 * push each data directory on `dirs`; every child is killed and every directory removed after
 * the file's tests.
 */
export function killSwitchServers(): {
  dirs: string[];
  start: (dataDir: string, killAfter?: string) => Promise<SpawnedServer>;
  stop: (child: SpawnedServer) => Promise<void>;
} {
  const dirs: string[] = [];
  const children: SpawnedServer[] = [];
  const alive = (c: SpawnedServer) => c.proc.exitCode === null && c.proc.signalCode === null;
  afterAll(async () => {
    for (const c of children) if (alive(c)) c.proc.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });
  return {
    dirs,
    async start(dataDir, killAfter) {
      const env: Record<string, string | undefined> = { ...process.env, RASK_DATA_DIR: dataDir, RASK_LOG_LEVEL: 'silent' };
      if (killAfter) env.RASK_TEST_KILL_AFTER = killAfter;
      else delete env.RASK_TEST_KILL_AFTER;
      const child = await spawnServer(path.join(import.meta.dirname, 'kill-switch-server.ts'), env);
      children.push(child);
      return child;
    },
    async stop(child) {
      if (alive(child)) child.proc.kill('SIGKILL');
      await child.exited;
    },
  };
}
