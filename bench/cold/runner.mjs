// One cold start, timed (bench/cold-start.ts): a fresh `node` process loads a function's handler
// from its task root as Lambda's Node runtime does (`<file>.<export>`, nothing from the
// repository on the module path), then answers the events in argv[4] (a JSON file) one after
// another, like one container. It prints one `@@COLD@@{…}` line with absolute wall-clock marks
// (performance.timeOrigin + now), so the parent can place them against the moment it spawned us.
// argv: taskRoot handler eventsFile
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const at = () => performance.timeOrigin + performance.now();
const up = at();
const [taskRoot, handler, eventsFile] = process.argv.slice(2);
const dot = handler.lastIndexOf('.');
const base = path.join(taskRoot, handler.slice(0, dot));
const file = ['.mjs', '.js', '.cjs'].map((ext) => base + ext).find((f) => existsSync(f));
if (!file) throw new Error(`no handler module ${base}.{mjs,js,cjs}`);
const events = JSON.parse(readFileSync(eventsFile, 'utf8'));
const context = (n) => ({
  awsRequestId: `cold-${n}`,
  functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'cold',
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION}:123456789012:function:${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
  memoryLimitInMB: '1024',
  logGroupName: `/aws/lambda/${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
  logStreamName: 'cold',
  getRemainingTimeInMillis: () => 30_000,
  callbackWaitsForEmptyEventLoop: true,
});

const beforeImport = at();
const module = await import(pathToFileURL(file).href);
const loaded = at();
const fn = module[handler.slice(dot + 1)];
const calls = [];
const hex = (n) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
for (const [i, event] of events.entries()) {
  const start = at();
  // As Lambda's runtime does for a function with active tracing: each invocation's trace header.
  process.env._X_AMZN_TRACE_ID = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${hex(24)};Parent=${hex(16)};Sampled=1`;
  // The parent stamps S3 requests by time, so it can tell the first call's from the warm one's.
  process.stdout.write(`\n@@CALL@@${i}\n`);
  const value = await fn(event, context(i + 1));
  const end = at();
  // CPU time of the whole process (every thread) since it started: unlike wall time, barely
  // moved by other processes on a busy machine (bench/cold-start.ts reports it beside the wall).
  const { user, system } = process.cpuUsage();
  // The bench's one check that rask and the floor answer the same rows (not part of any timing).
  if (process.env.COLD_PRINT_ANSWER && i === 0) process.stdout.write(`\n@@ANSWER@@${JSON.stringify(value)}\n`);
  calls.push({ start, end, cpuMs: (user + system) / 1000, status: value?.statusCode ?? (value?.ok === false ? 500 : 200), bytes: typeof value?.body === 'string' ? value.body.length : JSON.stringify(value ?? null).length });
}
const rssMiB = process.memoryUsage().rss / 1048576;
process.stdout.write(`\n@@COLD@@${JSON.stringify({ up, beforeImport, loaded, calls, rssMiB })}\n`);
process.exit(0);
