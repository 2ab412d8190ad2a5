/**
 * Defect 9 of issue #8: server-side waiting to commit is bounded by the request's deadline
 * (lib/deadline.ts), under API Gateway's 29 s, and past it the answer is 409 / code 14 with
 * nothing written — never a commit after the client gave up. Time is a hand-driven clock.
 */
import { describe, expect, it } from 'vitest';
import { type Clock, deadlineIn, withDeadline } from '../../lib/deadline.js';
import { ConcurrentModificationError } from '../../lib/errors.js';
import { serializedWrite } from '../../lib/catalog/data/write-queue.js';
import { ConditionFailedError } from '../../lib/ports/object-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { Registry } from '../../lib/registry/registry.js';

/** A clock that moves only when told to; sleepers wake when it passes their time. */
class ManualClock implements Clock {
  private t = 1_000_000;
  private sleepers: { at: number; wake: () => void }[] = [];
  now(): number {
    return this.t;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((wake) => {
      this.sleepers.push({ at: this.t + ms, wake });
      this.wakeDue();
    });
  }
  advance(ms: number): void {
    this.t += ms;
    this.wakeDue();
  }
  get waiting(): number {
    return this.sleepers.length;
  }
  private wakeDue(): void {
    const due = this.sleepers.filter((s) => s.at <= this.t);
    this.sleepers = this.sleepers.filter((s) => s.at > this.t);
    for (const s of due) s.wake();
  }
}

/** A clock whose sleeps pass instantly (so a retry loop runs at full speed on virtual time). */
class InstantClock implements Clock {
  t = 0;
  now = () => this.t;
  sleep = async (ms: number) => {
    this.t += ms;
  };
}

describe('registry retries under a commit deadline', () => {
  it('stop before the deadline and answer 14; no attempt starts after it', async () => {
    const clock = new InstantClock();
    const registry = new Registry(new MemoryObjectStore(), { attempts: 60, baseDelayMs: 1, maxDelayMs: 2 });
    const deadline = deadlineIn(25_000, clock);
    const started: number[] = [];
    const run = withDeadline(deadline, () =>
      registry.retrying('commit to a hot record', async () => {
        started.push(clock.now());
        clock.t += 1000; // each attempt's round trip takes a (virtual) second, and loses
        throw new ConditionFailedError('k', 'etag-mismatch');
      }),
    );
    const err = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConcurrentModificationError);
    expect((err as Error).message).toMatch(/25000 ms commit deadline/);
    expect(started.length).toBeLessThan(60);
    expect(started.length).toBeGreaterThanOrEqual(20);
    for (const at of started) expect(at).toBeLessThan(deadline.at);
  });

  it('without a deadline (background jobs) the attempt bound alone applies', async () => {
    const registry = new Registry(new MemoryObjectStore(), { attempts: 4, baseDelayMs: 1, maxDelayMs: 1 });
    let n = 0;
    const err = await registry
      .retrying('x', async () => {
        n++;
        throw new ConditionFailedError('k', 'etag-mismatch');
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConcurrentModificationError);
    expect(n).toBe(4);
  });
});

describe('writers queued on one table under a commit deadline', () => {
  it('a write whose turn does not come before the deadline never runs and answers 14', async () => {
    const clock = new ManualClock();
    const location = `/tmp/queue-test-${Math.random()}/t.lance`;
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((r) => (releaseFirst = r));
    let firstStarted!: () => void;
    const firstRunning = new Promise<void>((r) => (firstStarted = r));
    const ran: string[] = [];

    const first = withDeadline(deadlineIn(25_000, clock), () =>
      serializedWrite(location, async () => {
        ran.push('first');
        firstStarted();
        await firstHolds; // a slow commit
        return 'first';
      }),
    );
    await firstRunning;
    const second = withDeadline(deadlineIn(25_000, clock), () =>
      serializedWrite(location, async () => {
        ran.push('second');
        return 'second';
      }),
    ).catch((e: unknown) => e);
    // The second waits on the clock for its deadline (deterministic: no wall time involved).
    await vi_waitFor(() => clock.waiting === 1);
    clock.advance(24_999);
    expect(clock.waiting).toBe(1);
    clock.advance(1);
    const err = await second;
    expect(err).toBeInstanceOf(ConcurrentModificationError);
    expect((err as Error).message).toMatch(/nothing was written/);
    // The running write is not abandoned; the queue moves on after it.
    releaseFirst();
    expect(await first).toBe('first');
    const third = await withDeadline(deadlineIn(25_000, clock), () => serializedWrite(location, async () => (ran.push('third'), 'third')));
    expect(third).toBe('third');
    expect(ran).toEqual(['first', 'third']);
  });

  it('writers within the deadline run one at a time, in arrival order', async () => {
    const clock = new ManualClock();
    const location = `/tmp/queue-test-${Math.random()}/t.lance`;
    let running = 0;
    let maxRunning = 0;
    const order: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        withDeadline(deadlineIn(25_000, clock), () =>
          serializedWrite(location, async () => {
            running++;
            maxRunning = Math.max(maxRunning, running);
            await new Promise((r) => setImmediate(r));
            order.push(i);
            running--;
            return i;
          }),
        ),
      ),
    );
    expect(results).toEqual([0, 1, 2, 3, 4, 5]);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(maxRunning).toBe(1);
  });
});

/** Polls a condition on the event loop (no timers, so no wall-time dependence). */
async function vi_waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
}
