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
