import { describe, expect, it } from 'vitest';
import { initContainer } from '../../lib/app/container-init.js';

/** lib/app/container-init.ts: init-phase work of a Lambda container (issue #37). */
describe('container init', () => {
  const lambda = { AWS_LAMBDA_FUNCTION_NAME: 'fn' };
  const settle = () => new Promise((r) => setTimeout(r, 20));

  it('starts the app first, then each step on a later turn of the event loop, in order', async () => {
    const order: string[] = [];
    void initContainer(async () => void order.push('start'), [() => order.push('lancedb'), async () => void order.push('engine')], lambda);
    // The app's reads go out first: no step runs in the same turn.
    expect(order).toEqual(['start']);
    await settle();
    expect(order).toEqual(['start', 'lancedb', 'engine']);
  });

  it('settles once every step has run, without waiting for the start (the data and jobs entries await it: Lambda init lasts until LanceDB has loaded)', async () => {
    const order: string[] = [];
    let startDone = false;
    const done = initContainer(
      () => new Promise<void>((r) => setTimeout(() => { startDone = true; r(); }, 200)),
      [() => order.push('lancedb'), () => new Promise<void>((r) => setTimeout(() => { order.push('engine'); r(); }, 10))],
      lambda,
    );
    expect(order).toEqual([]);
    await done;
    expect(order).toEqual(['lancedb', 'engine']);
    expect(startDone).toBe(false);
  });

  it('a failing start or step stops nothing that follows and rejects nowhere', async () => {
    const order: string[] = [];
    const done = initContainer(() => Promise.reject(new Error('S3 down')), [() => { throw new Error('no layer'); }, () => order.push('engine')], lambda);
    await expect(done).resolves.toBeUndefined();
    expect(order).toEqual(['engine']);
  });

  it('outside Lambda it starts nothing (a test importing an entry)', async () => {
    const order: string[] = [];
    await initContainer(async () => void order.push('start'), [() => order.push('step')], {});
    await settle();
    expect(order).toEqual([]);
  });
});
