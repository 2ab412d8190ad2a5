import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { eventBridgePublisher } from '../../lib/adapters/aws/eventbridge-publisher.js';
import { ndjsonPublisher } from '../../lib/adapters/local/ndjson-publisher.js';
import { cloudEvent } from '../../lib/events/cloudevent.js';
import { raskEventSchema } from '../../lib/events/schema.js';
import { OPERATION_EVENTS, allEventTypes } from '../../lib/events/vocabulary.js';
import { ALL_OPERATIONS } from '../../lib/contract/operations.js';
import { renderEventsDoc } from '../../scripts/events-doc.js';

const sample = (n: number) =>
  cloudEvent('dev.rask.table.created', {
    project: 'p',
    kind: 'table',
    id: ['ns', `t${n}`],
    principal: 'ana',
    operation: 'CreateTable',
    request_id: `r${n}`,
    version: 1,
  });

describe('event vocabulary', () => {
  it('every operation of the table, spec and control plane, has an entry (a type, or null for a read) and nothing else does', () => {
    const ops = ALL_OPERATIONS.map((o) => o.operationId).sort();
    expect(Object.keys(OPERATION_EVENTS).sort()).toEqual(ops);
  });

  it('docs/events.md shows exactly the generated types and schema (npm run docs:events)', () => {
    const doc = readFileSync(new URL('../../docs/events.md', import.meta.url), 'utf8');
    expect(renderEventsDoc(doc)).toBe(doc);
    for (const type of allEventTypes()) expect(doc).toContain(`\`${type}\``);
  });

  it('built events satisfy the schema; a foreign type or a leaked field does not', () => {
    expect(() => raskEventSchema.parse(sample(1))).not.toThrow();
    expect(() => raskEventSchema.parse({ ...sample(1), type: 'dev.rask.table.exploded' })).toThrow();
    expect(() => raskEventSchema.parse({ ...sample(1), data: { ...sample(1).data, api_key: 'k' } })).toThrow();
  });
});

describe('EventBridge publisher', () => {
  const setup = (attempts = 3) => {
    const client = new EventBridgeClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    const mock = mockClient(client);
    const errors: Record<string, unknown>[] = [];
    const publisher = eventBridgePublisher({ client, busName: 'bus', attempts, sleep: async () => {}, onError: (_m, f) => errors.push(f) });
    return { mock, publisher, errors };
  };

  it('batches 10 entries per PutEvents with the CloudEvent as Detail', async () => {
    const { mock, publisher } = setup();
    mock.on(PutEventsCommand).callsFake(async (input) => ({ FailedEntryCount: 0, Entries: input.Entries.map((_: unknown, i: number) => ({ EventId: `e${i}` })) }));
    const events = Array.from({ length: 23 }, (_, i) => sample(i));
    await publisher.publish(events);
    const calls = mock.commandCalls(PutEventsCommand);
    expect(calls.map((c) => c.args[0].input.Entries!.length)).toEqual([10, 10, 3]);
    const first = calls[0].args[0].input.Entries![0];
    expect(first).toMatchObject({ EventBusName: 'bus', Source: 'rask://p', DetailType: 'dev.rask.table.created' });
    expect(JSON.parse(first.Detail!)).toEqual(JSON.parse(JSON.stringify(events[0])));
    expect(publisher.stats).toEqual({ published: 23, retried: 0, failed: 0 });
  });

  it('retries the entries EventBridge reports as failed, and only those', async () => {
    const { mock, publisher } = setup();
    mock
      .on(PutEventsCommand)
      .resolvesOnce({ FailedEntryCount: 1, Entries: [{ EventId: 'a' }, { ErrorCode: 'ThrottlingException' }, { EventId: 'c' }] })
      .resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'b' }] });
    await publisher.publish([sample(1), sample(2), sample(3)]);
    const calls = mock.commandCalls(PutEventsCommand);
    expect(calls).toHaveLength(2);
    expect(JSON.parse(calls[1].args[0].input.Entries![0].Detail!).data.request_id).toBe('r2');
    expect(publisher.stats).toEqual({ published: 3, retried: 1, failed: 0 });
  });

  it('never rejects: a bus that keeps failing is logged and counted', async () => {
    const { mock, publisher, errors } = setup(2);
    mock.on(PutEventsCommand).rejects(Object.assign(new Error('down'), { name: 'InternalException' }));
    await expect(publisher.publish([sample(1), sample(2)])).resolves.toBeUndefined();
    expect(mock.commandCalls(PutEventsCommand)).toHaveLength(2);
    expect(publisher.stats).toEqual({ published: 0, retried: 2, failed: 2 });
    expect(errors).toEqual([expect.objectContaining({ count: 2, reason: 'InternalException', types: ['dev.rask.table.created'] })]);
  });
});

describe('NDJSON publisher', () => {
  it('appends whole lines under concurrency, one file per UTC day', async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), 'rask-events-')), 'events');
    const publisher = ndjsonPublisher({ dir });
    await Promise.all(Array.from({ length: 40 }, (_, i) => publisher.publish([sample(i), sample(i + 100)])));
    const files = readdirSync(dir);
    expect(files).toEqual([`${sample(0).time.slice(0, 10)}.ndjson`]);
    const lines = readFileSync(path.join(dir, files[0]), 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(80);
    const ids = lines.map((l) => raskEventSchema.parse(JSON.parse(l)).data.request_id);
    expect(new Set(ids).size).toBe(80);
    expect(publisher.stats).toEqual({ published: 80, retried: 0, failed: 0 });
  });
});
