/**
 * A DataEngine twin (lib/ports/data-engine.ts) that opens no dataset: it records every call the
 * data plane makes through the port and answers from `answers`, the only behaviour it has. A
 * method given no answer refuses (code 0), so a test sees at once that the code under test
 * reached a call it did not expect.
 */
import { UnsupportedError } from '../../lib/errors.js';
import type { DataEngine } from '../../lib/ports/data-engine.js';

export interface EngineCall {
  readonly method: keyof DataEngine;
  readonly location: string;
  /** The arguments after the location. */
  readonly args: readonly unknown[];
}

export function countingEngine(answers: Partial<DataEngine> = {}): { engine: DataEngine; calls: EngineCall[] } {
  const calls: EngineCall[] = [];
  const engine = new Proxy({} as DataEngine, {
    get(_target, prop) {
      if (typeof prop !== 'string') return undefined;
      const method = prop as keyof DataEngine;
      return (location: string, ...args: unknown[]) => {
        calls.push({ method, location, args });
        const answer = answers[method] as ((...a: unknown[]) => Promise<unknown>) | undefined;
        if (!answer) return Promise.reject(new UnsupportedError(`the counting engine has no answer for ${method}`));
        return answer(location, ...args);
      };
    },
  });
  return { engine, calls };
}
