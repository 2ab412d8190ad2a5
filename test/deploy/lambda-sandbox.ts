/**
 * Lays a function out as Lambda would and runs it in a fresh Node process: the asset copied to
 * a task root outside the repository (so nothing resolves from the repo's node_modules), each
 * layer's contents merged under an `/opt` stand-in on NODE_PATH exactly as Lambda sets it, the
 * template's environment, and AWS endpoints pointed at the loopback fake.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAKE_REGION, type FunctionArtifact } from './assembly.js';

const RUNNER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'run-artifact.mjs');

export interface Sandbox {
  readonly fn: FunctionArtifact;
  readonly root: string;
  /** Invokes the handler in the sandbox's (warm) process. */
  invoke(event: unknown): Promise<InvokeResult>;
  /** Everything the process wrote to stderr and outside the result lines (its logs). */
  output(): string;
  dispose(): Promise<void>;
}

export type InvokeResult = { ok: true; value: unknown } | { ok: false; error: string };

export interface SandboxOptions {
  readonly endpoint: string;
  readonly credentials: { accessKeyId: string; secretAccessKey: string };
  /** Leave these layer-provided module directories out (to prove a test notices). */
  readonly dropFromLayers?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/** A function's files laid out as Lambda lays them out: the asset as task root, its layers merged under an `/opt` stand-in. */
export interface LambdaLayout {
  readonly root: string;
  readonly taskRoot: string;
  /** The process environment Lambda's Node runtime would give it (PATH, NODE_PATH, the template's variables, AWS endpoints at the fake). */
  readonly env: Record<string, string>;
}

export function layOutFunction(fn: FunctionArtifact, options: SandboxOptions): LambdaLayout {
  const root = mkdtempSync(path.join(tmpdir(), `rask-lambda-${fn.logicalId}-`));
  const taskRoot = path.join(root, 'var', 'task');
  const opt = path.join(root, 'opt');
  cpSync(fn.assetDir, taskRoot, { recursive: true });
  for (const layer of fn.layerDirs) cpSync(layer, opt, { recursive: true });
  for (const dropped of options.dropFromLayers ?? []) {
    rmSync(path.join(opt, 'nodejs', 'node_modules', dropped), { recursive: true, force: true });
  }
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: taskRoot,
    LAMBDA_TASK_ROOT: taskRoot,
    // As Lambda's Node runtime sets it (runtime directories omitted: they hold nothing of ours).
    NODE_PATH: [path.join(opt, 'nodejs', 'node22', 'node_modules'), path.join(opt, 'nodejs', 'node_modules'), taskRoot].join(':'),
    ...sandboxEnv(fn, options),
    ...options.env,
  };
  return { root, taskRoot, env };
}

export function createSandbox(fn: FunctionArtifact, options: SandboxOptions): Sandbox {
  const { root, taskRoot, env } = layOutFunction(fn, options);
  const child = spawn(process.execPath, [RUNNER, taskRoot, fn.handler, String(fn.timeoutSeconds * 1000)], {
    cwd: taskRoot,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let logs = '';
  let buffer = '';
  const waiting: ((r: InvokeResult) => void)[] = [];
  let exited: string | undefined;
  child.stdout.on('data', (d: Buffer) => {
    buffer += d.toString();
    let at: number;
    while ((at = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (line.startsWith('@@RESULT@@')) waiting.shift()?.(JSON.parse(line.slice('@@RESULT@@'.length)) as InvokeResult);
      else logs += line + '\n';
    }
  });
  child.stderr.on('data', (d: Buffer) => (logs += d.toString()));
  child.on('close', (code) => {
    exited = `${fn.logicalId} exited (${code}) while invoked.\n${logs.slice(-4000)}`;
    for (const w of waiting.splice(0)) w({ ok: false, error: exited });
  });
  return {
    fn,
    root,
    invoke: (event) =>
      new Promise((resolve) => {
        if (exited) return resolve({ ok: false, error: exited });
        waiting.push(resolve);
        child.stdin.write(JSON.stringify(event) + '\n');
      }),
    output: () => logs,
    dispose: async () => {
      child.stdin.end();
      if (!exited) await new Promise((r) => child.once('close', r));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function sandboxEnv(fn: FunctionArtifact, options: SandboxOptions): Record<string, string> {
  return {
    ...fn.environment,
    AWS_REGION: FAKE_REGION,
    AWS_DEFAULT_REGION: FAKE_REGION,
    AWS_ACCESS_KEY_ID: options.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: options.credentials.secretAccessKey,
    AWS_SESSION_TOKEN: 'fake-session-token',
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    // The SDK's service endpoints (every service) and LanceDB's object store (S3 only).
    AWS_ENDPOINT_URL: options.endpoint,
    AWS_ENDPOINT: options.endpoint,
    AWS_ALLOW_HTTP: 'true',
    AWS_VIRTUAL_HOSTED_STYLE_REQUEST: 'false',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}
