/**
 * Runs one fault workload (fault-workload.ts) in a process of its own and prints its report as
 * JSON on the last line. The suite starts it with `--max-opt=1` (V8's baseline tier, no
 * optimizing compiler): Node 20.20.2's V8 aborted ("unreachable code" in
 * Deoptimizer::DoComputeBuiltinContinuation, a deopt inside a builtin that calls back into JS)
 * in processes that drove the S3 fake past a few hundred keys, where every LIST sorts the
 * bucket's keys with a JS comparator (docs/testing.md, "Fault-injection suite"). Without an
 * optimizing tier there is nothing to deoptimize; in its own process an abort could not take the
 * test worker down with it either.
 */
import { inFlight, runFaultWorkload, type RunOptions } from './fault-workload.js';

// A run whose event loop empties with doors pending (a promise nothing will settle) says which.
process.on('beforeExit', () => {
  if (inFlight.size > 0) process.stderr.write(`doors that never finished: ${[...inFlight].join(', ')}\n`);
});
const options = JSON.parse(process.argv[2] ?? '{}') as RunOptions;
// The catalog's retry waits use unref'd timers (lib/deadline.ts: a server's socket keeps a real
// process alive); here nothing else does, and once every door in flight waits on one the event
// loop would drain and the process exit (code 13) with the run unfinished.
const keepAlive = setInterval(() => {}, 1_000);
const report = await runFaultWorkload(options);
clearInterval(keepAlive);
process.stdout.write(`\n${JSON.stringify(report)}\n`);
