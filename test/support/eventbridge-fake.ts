/**
 * A stateful EventBridge stand-in for the publisher tests: aws-sdk-client-mock intercepts `send`,
 * and PutEvents keeps what it accepted per bus and enforces what EventBridge enforces (1 to 10
 * entries and at most 256 KB of them per call, sized as EventBridge sizes them; Source, DetailType
 * and a JSON-object Detail on every entry). It can be told to fail whole calls or single entries,
 * so retries and losses are read back from what it stored, not from canned responses.
 */
import { randomBytes } from 'node:crypto';
import {
  EventBridgeClient,
  EventBridgeServiceException,
  InternalException,
  PutEventsCommand,
  type PutEventsCommandInput,
  type PutEventsRequestEntry,
  type PutEventsResultEntry,
} from '@aws-sdk/client-eventbridge';
import { mockClient, type AwsClientStub } from 'aws-sdk-client-mock';

/** EventBridge's PutEvents limits (API reference and "Calculating PutEvents event entry size"). */
export const PUT_EVENTS_MAX_ENTRIES = 10;
export const PUT_EVENTS_MAX_BYTES = 256 * 1024;

export interface AcceptedEntry {
  readonly bus: string;
  readonly entry: PutEventsRequestEntry;
  readonly eventId: string;
}

export interface PutEventsCall {
  readonly entries: number;
  readonly bytes: number;
  /** The whole call was refused (thrown), as opposed to some of its entries failing. */
  readonly thrown: boolean;
}

export interface EventBridgeFake {
  /** Hand this to the code under test. */
  readonly client: EventBridgeClient;
  readonly mock: AwsClientStub<EventBridgeClient>;
  /** Entries accepted on `bus`, in the order they were accepted. */
  accepted(bus: string): readonly AcceptedEntry[];
  /** Every PutEvents call served, in order. */
  calls(): readonly PutEventsCall[];
  /** The next `times` calls throw `error` (default: InternalException, 500). */
  failCalls(times: number, error?: Error): void;
  /** The next `times` entries that `match` are answered with `code` instead of being accepted. */
  failEntries(match: (entry: PutEventsRequestEntry) => boolean, options?: { times?: number; code?: string }): void;
}

/** An entry's size as EventBridge computes it: Time counts 14 bytes, the strings their UTF-8 bytes. */
export function putEventsEntrySize(entry: PutEventsRequestEntry): number {
  const utf8 = (s: string | undefined) => (s === undefined ? 0 : Buffer.byteLength(s, 'utf8'));
  return (
    (entry.Time === undefined ? 0 : 14) +
    utf8(entry.Source) +
    utf8(entry.DetailType) +
    utf8(entry.Detail) +
    (entry.Resources ?? []).reduce((n, r) => n + utf8(r), 0)
  );
}

export function eventBridgeError(name: string, message: string, status = 400): EventBridgeServiceException {
  return new EventBridgeServiceException({ name, message, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });
}

export function createEventBridgeFake(): EventBridgeFake {
  const client = new EventBridgeClient({ region: 'us-east-1', credentials: { accessKeyId: 'fake', secretAccessKey: 'fake' } });
  const mock = mockClient(client);
  const accepted: AcceptedEntry[] = [];
  const calls: PutEventsCall[] = [];
  let callFailures: { left: number; error: Error } = { left: 0, error: new Error('unused') };
  const entryFailures: { match: (e: PutEventsRequestEntry) => boolean; left: number; code: string }[] = [];

  const refuse = (entry: PutEventsRequestEntry): { code: string; message: string } | undefined => {
    if (!entry.Source || !entry.DetailType || entry.Detail === undefined) return { code: 'InvalidArgument', message: 'Parameters Source, DetailType and Detail are required.' };
    let detail: unknown;
    try {
      detail = JSON.parse(entry.Detail);
    } catch {
      detail = undefined;
    }
    if (detail === null || typeof detail !== 'object' || Array.isArray(detail)) return { code: 'MalformedDetail', message: 'Detail is malformed.' };
    const injected = entryFailures.find((f) => f.left > 0 && f.match(entry));
    if (injected) {
      injected.left--;
      return { code: injected.code, message: 'injected by the fake' };
    }
    return undefined;
  };

  mock.onAnyCommand().callsFake(async (input) => {
    throw new Error(`EventBridge fake: command not supported (input ${JSON.stringify(input)})`);
  });
  mock.on(PutEventsCommand).callsFake(async (input: PutEventsCommandInput) => {
    const entries = input.Entries ?? [];
    const bytes = entries.reduce((n, e) => n + putEventsEntrySize(e), 0);
    const call = { entries: entries.length, bytes };
    if (callFailures.left > 0) {
      callFailures.left--;
      calls.push({ ...call, thrown: true });
      throw callFailures.error;
    }
    if (entries.length < 1 || entries.length > PUT_EVENTS_MAX_ENTRIES) {
      calls.push({ ...call, thrown: true });
      throw eventBridgeError('ValidationException', `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and ${PUT_EVENTS_MAX_ENTRIES}`);
    }
    if (bytes > PUT_EVENTS_MAX_BYTES) {
      calls.push({ ...call, thrown: true });
      throw eventBridgeError('ValidationException', 'Total size of the entries in the request is over the limit.');
    }
    calls.push({ ...call, thrown: false });
    const results: PutEventsResultEntry[] = entries.map((entry) => {
      const refused = refuse(entry);
      if (refused) return { ErrorCode: refused.code, ErrorMessage: refused.message };
      const eventId = randomBytes(8).toString('hex');
      accepted.push({ bus: entry.EventBusName ?? 'default', entry, eventId });
      return { EventId: eventId };
    });
    return { FailedEntryCount: results.filter((r) => r.ErrorCode !== undefined).length, Entries: results };
  });

  return {
    client,
    mock,
    accepted: (bus) => accepted.filter((a) => a.bus === bus),
    calls: () => [...calls],
    failCalls(times, error = new InternalException({ message: 'injected by the fake', $metadata: { httpStatusCode: 500 } })) {
      callFailures = { left: times, error };
    },
    failEntries(match, { times = 1, code = 'InternalFailure' } = {}) {
      entryFailures.push({ match, left: times, code });
    },
  };
}
