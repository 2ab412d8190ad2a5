import { type ChildProcess, spawn } from 'node:child_process';

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
