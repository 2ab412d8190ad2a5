import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLocalServer, type RunningServer } from '../../lib/app/server.js';
import { loadLocalConfig } from '../../lib/config.js';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';

export interface TestServer extends RunningServer {
  /** Raw HTTP against the server: `path` is sent exactly as given (already encoded). */
  request(method: string, path: string, body?: string | Buffer, headers?: Record<string, string>): Promise<RawResponse>;
  stop(): Promise<void>;
  /** Keys of the job records in the registry (queued, running and finished), for "nothing was queued" checks. */
  jobKeys(): Promise<string[]>;
  /** jobKeys once no job is live: a finished job's move from live/ to done/ is not atomic to a listing. */
  settledJobKeys(): Promise<string[]>;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  bytes: Buffer;
  json(): any;
}

/** The real local server on a free loopback port with a throw-away data directory. */
export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'rask-test-'));
  const running = await startLocalServer(
    // Request lines at info would drown test output; warnings and errors still show.
    loadLocalConfig({ RASK_PORT: '0', RASK_DATA_DIR: dataDir, RASK_HOST: '127.0.0.1', RASK_LOG_LEVEL: 'warn', ...env }),
  );
  const jobKeys = async (): Promise<string[]> => {
    const registry = new FsObjectStore(path.join(dataDir, 'registry'));
    return (await registry.list({ prefix: 'p/' })).objects.map((o) => o.key).filter((k) => k.includes('/jobs/'));
  };
  return {
    ...running,
    async request(method, p, body, headers = {}) {
      // A JSON client's request: a text body goes as application/json unless the test says otherwise
      // (fetch would send text/plain, which JSON doors refuse: lib/http/content-type.ts).
      const typed = typeof body === 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
      const res = await fetch(running.url + p, { method, body, headers: typed ? { 'content-type': 'application/json', ...headers } : headers });
      const bytes = Buffer.from(await res.arrayBuffer());
      const text = bytes.toString('utf8');
      return { status: res.status, headers: res.headers, text, bytes, json: () => JSON.parse(text) };
    },
    jobKeys,
    async settledJobKeys() {
      for (let i = 0; i < 200; i++) {
        const found = await jobKeys();
        if (!found.some((k) => k.includes('/jobs/live/'))) return found;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('jobs still live after 10 s');
    },
    async stop() {
      await running.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
