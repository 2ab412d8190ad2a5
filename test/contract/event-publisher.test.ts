/**
 * The EventPublisher contract on both adapters (EventBridge through the stateful fake, also behind
 * lazyPublisher as lib/app/aws-relay.ts wires it; NDJSON read back from its files), and what each adapter
 * promises beyond it.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventBridgePublisher } from '../../lib/adapters/aws/eventbridge-publisher.js';
import { ndjsonPublisher } from '../../lib/adapters/local/ndjson-publisher.js';
import type { RaskEvent } from '../../lib/events/cloudevent.js';
import { raskEventSchema } from '../../lib/events/schema.js';
import { lazyPublisher } from '../../lib/ports/event-publisher.js';
import { createEventBridgeFake, PUT_EVENTS_MAX_BYTES, PUT_EVENTS_MAX_ENTRIES, type EventBridgeFake } from '../support/eventbridge-fake.js';
import { runEventPublisherContract, sampleEvent, type OnError, type PublisherUnderTest } from './event-publisher.suite.js';

const BUS = 'rask-events';

/** What the fake accepted on the bus, as consumers get it: the Detail, whose envelope must agree with it. */
function readBus(fake: EventBridgeFake): RaskEvent[] {
  return fake.accepted(BUS).map(({ entry }) => {
    const event = raskEventSchema.parse(JSON.parse(entry.Detail!)) as RaskEvent;
    expect({ source: entry.Source, type: entry.DetailType, time: entry.Time?.toISOString() }).toEqual({
      source: event.source,
      type: event.type,
      time: event.time,
    });
    return event;
  });
}

function overEventBridge(onError: OnError, attempts = 3) {
  const fake = createEventBridgeFake();
  const sleeps: number[] = [];
  const publisher = eventBridgePublisher({ client: fake.client, busName: BUS, attempts, onError, sleep: async (ms) => void sleeps.push(ms) });
  return { fake, sleeps, publisher };
}

const eventBridgeUnderTest = (fake: EventBridgeFake, attempts: number) => ({
  delivered: async () => readBus(fake),
  breakSink: async () => fake.failCalls(Number.POSITIVE_INFINITY),
  mendSink: async () => fake.failCalls(0),
  attempts,
  cleanup: async () => fake.mock.restore(),
});

runEventPublisherContract('EventBridge over the fake', async (onError) => {
  const { fake, publisher } = overEventBridge(onError);
  return { publisher, ...eventBridgeUnderTest(fake, 3) };
});

runEventPublisherContract('EventBridge over the fake, one attempt', async (onError) => {
  const { fake, publisher } = overEventBridge(onError, 1);
  return { publisher, ...eventBridgeUnderTest(fake, 1) };
});

runEventPublisherContract('EventBridge behind lazyPublisher (as lib/app/aws-relay.ts wires it)', async (onError) => {
  const { fake, publisher } = overEventBridge(onError);
  return { publisher: lazyPublisher(async () => publisher), ...eventBridgeUnderTest(fake, 3) };
});

/** The NDJSON publisher on a fresh `events/` directory; breaking it puts a file where the directory was. */
function overNdjson(onError: OnError): PublisherUnderTest & { dir: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'rask-events-contract-'));
  const dir = path.join(root, 'events');
  const aside = path.join(root, 'events-aside');
  // Every line must be a whole event: a file ends with a newline, so only the last piece is ''.
  const linesOf = (d: string) =>
    isDir(d)
      ? readdirSync(d)
          .sort()
          .flatMap((f) => {
            const pieces = readFileSync(path.join(d, f), 'utf8').split('\n');
            if (pieces.at(-1) !== '') throw new Error(`${f} ends in the middle of a line`);
            return pieces.slice(0, -1);
          })
      : [];
  return {
    dir,
    publisher: ndjsonPublisher({ dir, onError }),
    delivered: async () => [...linesOf(aside), ...linesOf(dir)].map((l) => raskEventSchema.parse(JSON.parse(l)) as RaskEvent),
    breakSink: async () => {
      if (existsSync(dir)) renameSync(dir, aside);
      writeFileSync(dir, 'not a directory');
    },
    mendSink: async () => unlinkSync(dir),
    attempts: 1,
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  };
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

runEventPublisherContract('NDJSON files', async (onError) => overNdjson(onError));

describe('EventBridge publisher, beyond the contract', () => {
  const setup = (attempts = 3) => {
    const errors: Record<string, unknown>[] = [];
    return { errors, ...overEventBridge((_m, fields) => errors.push(fields), attempts) };
  };

  it(`sends at most ${PUT_EVENTS_MAX_ENTRIES} entries per PutEvents, to the configured bus`, async () => {
    const { fake, publisher } = setup();
    const events = Array.from({ length: 23 }, (_, i) => sampleEvent(i));
    await publisher.publish(events);
    expect(fake.calls().map((c) => [c.entries, c.thrown])).toEqual([
      [10, false],
      [10, false],
      [3, false],
    ]);
    expect(fake.accepted(BUS).map((a) => JSON.parse(a.entry.Detail!).id)).toEqual(events.map((e) => e.id));
  });

  it('splits a batch whose entries together pass 256 KB, so none is refused', async () => {
    const { fake, publisher } = setup();
    // Ten events of ~60 KB: four fit in one PutEvents, ten do not.
    const events = Array.from({ length: 10 }, (_, i) => sampleEvent(i, { blob: 'x'.repeat(60_000) }));
    await publisher.publish(events);
    expect(fake.calls().every((c) => !c.thrown && c.bytes <= PUT_EVENTS_MAX_BYTES)).toBe(true);
    expect(fake.calls().length).toBeGreaterThanOrEqual(3);
    expect(readBus(fake).map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(publisher.stats).toEqual({ published: 10, retried: 0, failed: 0 });
  });

  it('counts an event too large for any PutEvents as lost, and still delivers the events beside it', async () => {
    const { fake, publisher, errors } = setup();
    const huge = sampleEvent(1, { blob: 'x'.repeat(PUT_EVENTS_MAX_BYTES) });
    const small = [sampleEvent(0), sampleEvent(2)];
    await expect(publisher.publish([small[0], huge, small[1]])).resolves.toBeUndefined();
    expect(readBus(fake).map((e) => e.id)).toEqual(small.map((e) => e.id));
    expect(publisher.stats).toMatchObject({ published: 2, failed: 1 });
    expect(errors).toEqual([expect.objectContaining({ count: 1, ids: [huge.id] })]);
  });

  it('retries only the entries EventBridge reports as failed, with backoff, and delivers each once', async () => {
    const { fake, publisher, sleeps } = setup();
    const events = [sampleEvent(0), sampleEvent(1), sampleEvent(2)];
    fake.failEntries((entry) => JSON.parse(entry.Detail!).id === events[1].id, { code: 'ThrottlingException' });
    await publisher.publish(events);
    expect(fake.calls().map((c) => c.entries)).toEqual([3, 1]);
    expect(readBus(fake).map((e) => e.id)).toEqual([events[0].id, events[2].id, events[1].id]);
    expect(publisher.stats).toEqual({ published: 3, retried: 1, failed: 0 });
    expect(sleeps).toHaveLength(1);
  });

  it('retries a call that throws as a whole', async () => {
    const { fake, publisher, sleeps } = setup();
    fake.failCalls(2);
    const events = [sampleEvent(0), sampleEvent(1)];
    await publisher.publish(events);
    expect(fake.calls().map((c) => c.thrown)).toEqual([true, true, false]);
    expect(readBus(fake).map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(publisher.stats).toEqual({ published: 2, retried: 4, failed: 0 });
    expect(sleeps[1]).toBeGreaterThan(sleeps[0]);
  });

  it('loses alone an entry that fails on every attempt, and reports its id, type and the reason', async () => {
    const { fake, publisher, errors } = setup(3);
    const events = [sampleEvent(0), sampleEvent(1), sampleEvent(2)];
    fake.failEntries((entry) => JSON.parse(entry.Detail!).id === events[1].id, { times: Number.POSITIVE_INFINITY });
    await publisher.publish(events);
    expect(readBus(fake).map((e) => e.id)).toEqual([events[0].id, events[2].id]);
    expect(publisher.stats).toEqual({ published: 2, retried: 2, failed: 1 });
    expect(errors).toEqual([{ count: 1, reason: 'InternalFailure', types: [events[1].type], ids: [events[1].id] }]);
  });
});

describe('NDJSON publisher, beyond the contract', () => {
  it('writes each event, as one line, into the file of the UTC day it was appended (not of its time: a late append lands after every cursor)', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'rask-events-days-'));
    const dir = path.join(root, 'events');
    let clock = new Date('2026-03-05T23:59:59.000Z');
    const publisher = ndjsonPublisher({ dir, now: () => clock });
    try {
      const [a, b, c] = [sampleEvent(0), sampleEvent(25), sampleEvent(9)];
      await publisher.publish([a, b]);
      clock = new Date('2026-03-06T00:00:01.000Z');
      await publisher.publish([c]);
      const files = readdirSync(dir).sort();
      expect(files).toEqual(['2026-03-05.ndjson', '2026-03-06.ndjson']);
      const ids = (f: string) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as RaskEvent).id);
      expect(ids(files[0])).toEqual([a.id, b.id]);
      expect(ids(files[1])).toEqual([c.id]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('lazyPublisher', () => {
  it('counts the events of a publish whose publisher cannot be built as lost, and builds again on the next', async () => {
    const fake = createEventBridgeFake();
    let builds = 0;
    const lazy = lazyPublisher(async () => {
      if (++builds === 1) throw new Error('no client');
      return eventBridgePublisher({ client: fake.client, busName: BUS, sleep: async () => {} });
    });
    await expect(lazy.publish([sampleEvent(0), sampleEvent(1)])).resolves.toBeUndefined();
    await lazy.publish([sampleEvent(2)]);
    await lazy.publish([sampleEvent(3)]);
    expect(builds).toBe(2);
    expect(readBus(fake).map((e) => e.data.request_id)).toEqual(['r2', 'r3']);
    expect(lazy.stats).toEqual({ published: 2, retried: 0, failed: 2 });
    fake.mock.restore();
  });
});
