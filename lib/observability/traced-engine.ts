import type { DataEngine } from '../ports/data-engine.js';
import { msSince, trace, tracing } from '../trace.js';

/**
 * The data engine as a traced request sees it (docs/operations.md, "Logging"): each call a
 * request makes into LanceDB becomes a `step` line (`step` = `data engine`, `call` = the
 * method, `ms`), so the handler's time splits into the engine's and the catalog's. Installed
 * only at RASK_LOG_LEVEL=debug (lib/app/build.ts); outside a traced request a call passes
 * straight through. Locations are not logged: the request id ties the line to its table.
 */
export function tracedEngine(engine: DataEngine): DataEngine {
  return new Proxy(engine, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!tracing()) return value.apply(target, args);
        const started = performance.now();
        const out: unknown = value.apply(target, args);
        if (!(out instanceof Promise)) return out;
        const done = (outcome: string) => trace('step', { step: 'data engine', call: String(prop), outcome, ms: msSince(started) });
        return out.then(
          (result: unknown) => {
            done('ok');
            return result;
          },
          (err: unknown) => {
            done('error');
            throw err;
          },
        );
      };
    },
  });
}
