// Runs in a fresh `node` process the way Lambda's Node runtime would: imports the handler
// module named by the template (`<file>.<export>`) from the function's task root and invokes
// it once per event, like one warm container. No tsx and no repository on the module path.
// argv: taskRoot handler timeoutMs. stdin: one JSON event per line. stdout: one `@@RESULT@@{…}` line each.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const [taskRoot, handler, timeoutArg] = process.argv.slice(2);
// As on Lambda, each invocation's remaining time starts at the function's configured timeout.
const timeoutMs = Number(timeoutArg) > 0 ? Number(timeoutArg) : 60_000;
const dot = handler.lastIndexOf('.');
const base = path.join(taskRoot, handler.slice(0, dot));
const file = ['.mjs', '.js', '.cjs'].map((ext) => base + ext).find((f) => existsSync(f));
const answer = (result) => process.stdout.write(`\n@@RESULT@@${JSON.stringify(result)}\n`);

let fn;
try {
  if (!file) throw new Error(`no handler module ${base}.{mjs,js,cjs} in the asset`);
  const module = await import(pathToFileURL(file).href);
  fn = module[handler.slice(dot + 1)];
  if (typeof fn !== 'function') throw new Error(`${file} exports no function "${handler.slice(dot + 1)}"`);
} catch (error) {
  fn = () => { throw error; };
}

let n = 0;
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const deadline = Date.now() + timeoutMs;
  const context = {
    awsRequestId: `smoke-${++n}`,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'smoke',
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION}:123456789012:function:${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    memoryLimitInMB: '1024',
    logGroupName: `/aws/lambda/${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    logStreamName: 'smoke',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    callbackWaitsForEmptyEventLoop: true,
  };
  try {
    answer({ ok: true, value: (await fn(JSON.parse(line), context)) ?? null });
  } catch (error) {
    answer({ ok: false, error: String(error?.stack ?? error) });
  }
}
