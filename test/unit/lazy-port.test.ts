import { describe, expect, it } from 'vitest';
import { lazyPort } from '../../lib/ports/lazy.js';

interface Counter {
  add(n: number): Promise<number>;
  total(): Promise<number>;
}

function counter(): Counter {
  let sum = 0;
  return { add: async (n) => (sum += n), total: async () => sum };
}

describe('lazyPort', () => {
  it('builds nothing until the first call, then forwards every method with its arguments to one instance', async () => {
    let builds = 0;
    const port = lazyPort<Counter>(async () => (builds++, counter()), { add: true, total: true });
    expect(builds).toBe(0);
    // Concurrent first calls share the one build (and therefore the one instance's state).
    await Promise.all([port.add(2), port.add(3), port.add(5)]);
    expect(await port.total()).toBe(10);
    expect(builds).toBe(1);
  });

  it('a failed build fails the call and is retried by the next one', async () => {
    let attempts = 0;
    const port = lazyPort<Counter>(
      async () => {
        if (++attempts === 1) throw new Error('module not found');
        return counter();
      },
      { add: true, total: true },
    );
    await expect(port.add(1)).rejects.toThrow('module not found');
    expect(await port.add(4)).toBe(4);
    expect(attempts).toBe(2);
  });

  it('passes the adapter\'s own rejection through unchanged', async () => {
    const port = lazyPort<Counter>(async () => ({ add: async () => Promise.reject(new RangeError('bad n')), total: async () => 0 }), { add: true, total: true });
    await expect(port.add(-1)).rejects.toBeInstanceOf(RangeError);
    expect(await port.total()).toBe(0);
  });
});
