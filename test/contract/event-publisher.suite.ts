/**
 * The behaviour every EventPublisher must share (lib/ports/event-publisher.ts), written once and
 * run against each adapter (event-publisher.test.ts): each published event reaches the sink once
 * with every field intact; `publish` never rejects; what is lost is counted (`failed`), re-attempts
 * are counted (`retried`), and `onError` is told; a sink that comes back is written to again.
 * What only one adapter promises (EventBridge's batch limits and per-entry retries, NDJSON's file
 * per day) is tested beside it in event-publisher.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cloudEvent, type RaskEvent } from '../../lib/events/cloudevent.js';
import type { EventPublisher } from '../../lib/ports/event-publisher.js';

export type OnError = (message: string, fields: Record<string, unknown>) => void;

export interface PublisherUnderTest {
  readonly publisher: EventPublisher;
  /** Every event the sink holds, read back from what the adapter wrote, in the order stored. */
  delivered(): Promise<RaskEvent[]>;
  /** Every write to the sink fails from now until `mendSink`. */
  breakSink(): Promise<void>;
  mendSink(): Promise<void>;
  /** How many times the adapter tries an event (the first included) before it counts it lost. */
  readonly attempts: number;
  readonly cleanup?: () => Promise<void>;
}

const DAY = 86_400_000;
const T0 = Date.parse('2026-03-01T23:59:59.250Z');

/** A change event of the vocabulary; `n` varies its id, time (one UTC day per 10) and data. */
export function sampleEvent(n: number, details?: Record<string, unknown>): RaskEvent {
  return cloudEvent(
    n % 2 === 0 ? 'dev.rask.table.created' : 'dev.rask.namespace.dropped',
    {
      project: n % 3 === 0 ? 'proj/é' : 'p',
      warehouse: 'wh',
      kind: n % 2 === 0 ? 'table' : 'namespace',
      id: ['ns', `t${n}`, 'ünï ✓'],
      principal: 'ana',
      operation: n % 2 === 0 ? 'CreateTable' : 'DropNamespace',
      request_id: `r${n}`,
      ...(n % 2 === 0 ? { version: n } : {}),
      details: details ?? { n, nested: { list: [1, 'two', null], flag: true } },
    },
    new Date(T0 + Math.floor(n / 10) * DAY + n),
  );
}

/** The events as a consumer reads them (JSON has no undefined, Dates are strings), ordered by id. */
const byId = (events: readonly RaskEvent[]) => [...events].sort((a, b) => a.id.localeCompare(b.id)).map((e) => JSON.parse(JSON.stringify(e)) as RaskEvent);

export function runEventPublisherContract(name: string, make: (onError: OnError) => Promise<PublisherUnderTest>): void {
  describe(`EventPublisher contract: ${name}`, () => {
    let under: PublisherUnderTest | undefined;
    let errors: { message: string; fields: Record<string, unknown> }[];
    afterEach(async () => {
      await under?.cleanup?.();
      under = undefined;
    });
    const setup = async () => {
      errors = [];
      under = await make((message, fields) => errors.push({ message, fields }));
      return under;
    };
    /** Events onError reported lost, summed over its calls. */
    const reportedLost = () => errors.reduce((n, e) => n + (e.fields.count as number), 0);

    it('delivers one event once, with id, type, source, subject, time and data intact', async () => {
      const { publisher, delivered } = await setup();
      const event = sampleEvent(0);
      await publisher.publish([event]);
      expect(await delivered()).toEqual(byId([event]));
      expect(publisher.stats).toEqual({ published: 1, retried: 0, failed: 0 });
      expect(errors).toEqual([]);
    });

    it('delivers each of many events exactly once, across batches and UTC days, counting every one', async () => {
      const { publisher, delivered } = await setup();
      const first = Array.from({ length: 23 }, (_, i) => sampleEvent(i));
      const second = Array.from({ length: 4 }, (_, i) => sampleEvent(100 + i));
      await publisher.publish(first);
      await publisher.publish(second);
      expect(byId(await delivered())).toEqual(byId([...first, ...second]));
      expect(publisher.stats).toEqual({ published: 27, retried: 0, failed: 0 });
    });

    it('delivers concurrent publishes once each', async () => {
      const { publisher, delivered } = await setup();
      const batches = Array.from({ length: 12 }, (_, b) => [0, 1, 2].map((i) => sampleEvent(b * 3 + i)));
      await Promise.all(batches.map((batch) => publisher.publish(batch)));
      expect(byId(await delivered())).toEqual(byId(batches.flat()));
      expect(publisher.stats).toEqual({ published: 36, retried: 0, failed: 0 });
    });

    it('publishes nothing for no events, and counts nothing', async () => {
      const { publisher, delivered } = await setup();
      await publisher.publish([]);
      expect(await delivered()).toEqual([]);
      expect(publisher.stats).toEqual({ published: 0, retried: 0, failed: 0 });
      expect(errors).toEqual([]);
    });

    it('never rejects when the sink is down: each event is tried, counted lost once, reported, and not stored', async () => {
      const { publisher, delivered, breakSink, attempts } = await setup();
      await breakSink();
      const events = [sampleEvent(1), sampleEvent(2), sampleEvent(3)];
      await expect(publisher.publish(events)).resolves.toBeUndefined();
      expect(publisher.stats).toEqual({ published: 0, retried: 3 * (attempts - 1), failed: 3 });
      expect(reportedLost()).toBe(3);
      expect(errors.every((e) => typeof e.message === 'string' && e.message.length > 0)).toBe(true);
      expect(await delivered()).toEqual([]);
    });

    it('writes again once the sink is back, and does not bring back the events it counted lost', async () => {
      const { publisher, delivered, breakSink, mendSink, attempts } = await setup();
      const before = sampleEvent(10);
      const lost = sampleEvent(11);
      const after = sampleEvent(12);
      await publisher.publish([before]);
      await breakSink();
      await publisher.publish([lost]);
      await mendSink();
      await publisher.publish([after]);
      expect(byId(await delivered())).toEqual(byId([before, after]));
      expect(publisher.stats).toEqual({ published: 2, retried: attempts - 1, failed: 1 });
      expect(reportedLost()).toBe(1);
    });
  });
}
