/**
 * The local server in a child process, for requests that might take the whole process down
 * (a native crash in LanceDB would kill the vitest worker with it). The test talks HTTP to it
 * and can ask whether it is still alive.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RawResponse } from '../support/server.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ChildServer {
  readonly url: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  /** Resolves with the exit code / signal once the process has ended (for whatever reason). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  request(method: string, path: string, body?: string | Buffer, headers?: Record<string, string>): Promise<RawResponse>;
  /** The process has not exited and still answers a request. */
  alive(): Promise<boolean>;
  /** Stops this server (SIGTERM to our own child only) and removes its data directory. */
  stop(): Promise<void>;
  readonly stderr: () => string;
}

export async function startChildServer(env: Record<string, string> = {}): Promise<ChildServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'rask-child-'));
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'functions/local-server.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, RASK_PORT: '0', RASK_HOST: '127.0.0.1', RASK_DATA_DIR: dataDir, RASK_JOBS_INTERVAL_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (c: string) => (stderr += c));
  let ended = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      ended = true;
      resolve({ code, signal });
    });
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c: string) => {
      stdout += c;
      const m = /rask listening on (\S+)/.exec(stdout);
      if (m) resolve(m[1]);
    });
    void exited.then((r) => reject(new Error(`server exited (${r.code ?? r.signal}) before listening: ${stderr}`)));
  });
  const request: ChildServer['request'] = async (method, p, body, headers = {}) => {
    // A JSON client: a text body goes as application/json (lib/http/content-type.ts).
    const res = await fetch(url + p, { method, body, headers: typeof body === 'string' ? { 'content-type': 'application/json', ...headers } : headers });
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString('utf8');
    return { status: res.status, headers: res.headers, text, bytes, json: () => JSON.parse(text) };
  };
  return {
    url,
    dataDir,
    child,
    exited,
    request,
    stderr: () => stderr,
    async alive() {
      if (ended) return false;
      try {
        return (await request('GET', '/v1/namespace/%24/list')).status === 200;
      } catch {
        return false;
      }
    },
    async stop() {
      if (!ended) {
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
