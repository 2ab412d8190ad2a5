import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * What a Lambda container does during init, before its first event (issue #37;
 * docs/benchmarks.md, "Cold starts against the floor"): Lambda runs the handler module's top level
 * with full CPU before the first request, so the entries start the app (its first registry reads
 * go out at once) and then, one turn of the event loop each while those reads are in flight, the
 * slow synchronous loads the first call would otherwise wait for: LanceDB's native module in the
 * data and jobs functions. A request that needs a step finds it done or joins it (each step is
 * idempotent). The policy engine is no step: a platform administrator's request never needs it,
 * so it is compiled by the first request that does (lib/governance/guard.ts).
 *
 * The returned promise settles (never rejects) once every step has run; the app's start is not
 * waited for. The data and jobs entries await it at their top level, so that LanceDB's load is
 * part of Lambda's init (which ends when the handler module has been evaluated) rather than of
 * the first request: left to a later turn of the event loop after the module had been
 * evaluated, it ran while the first event was already being handled and took a third of the
 * first call's CPU (docs/benchmarks.md, "Cold starts: the tracer's context, CJS, init").
 *
 * Only inside Lambda (AWS_LAMBDA_FUNCTION_NAME set): a test importing an entry starts nothing.
 */
export async function initContainer(start: () => Promise<unknown>, steps: readonly (() => unknown)[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (!env.AWS_LAMBDA_FUNCTION_NAME) return;
  // A failed start is retried by the first request (lib/app/aws.ts, lazyAwsRouter).
  start().catch(() => undefined);
  for (const step of steps) {
    await nextTurn();
    try {
      await step();
    } catch {
      // Left for the request that needs it to report.
    }
  }
}
