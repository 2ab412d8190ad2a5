import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Debian's Chromium, which .ci/run installs when missing (docs/console.md, "Tests"). */
export const CHROMIUM = process.env.RASK_CHROMIUM ?? '/usr/bin/chromium';

export function requireChromium(): string {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the console's browser tests need Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this), or set RASK_CHROMIUM`);
  }
  return CHROMIUM;
}

export interface ConsoleServer {
  readonly url: string;
  readonly dataDir: string;
  /** Everything the server process wrote to stdout and stderr so far. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * `npm start` as a person runs it (functions/local-server.ts through tsx, so /console is served
 * from the bundle it builds), on a free port with a throw-away data directory; its output is
 * kept so a test can read the server log.
 */
export async function startConsoleServer(env: Record<string, string>): Promise<ConsoleServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'rask-console-'));
  let output = '';
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'functions/local-server.ts'], {
    cwd: repo,
    env: { ...process.env, RASK_PORT: '0', RASK_HOST: '127.0.0.1', RASK_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const m = /rask listening on (http:\/\/[0-9.:]+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    dataDir,
    log: () => output,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The `rask` CLI against a data directory. */
export function rask(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(repo, 'bin/rask.mjs'), ...args], { cwd: repo, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
