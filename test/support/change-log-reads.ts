import type { EventBridgeFake } from './eventbridge-fake.js';
import type { S3Fake } from './s3-fake.js';

/** The change log's entries as the registry bucket of the S3 fake holds them (`registry/changes/…`), parsed. */
export function loggedChanges(s3: S3Fake, registryBucket: string): ReturnType<typeof JSON.parse>[] {
  return [...s3.bucketContents(registryBucket).entries()]
    .filter(([k]) => k.startsWith('registry/changes/'))
    .map(([, v]) => JSON.parse(v.toString('utf8')));
}

/** The CloudEvents the EventBridge fake accepted on one bus (each entry's `Detail`), parsed. */
export function busChanges(eb: EventBridgeFake, bus: string): ReturnType<typeof JSON.parse>[] {
  return eb.accepted(bus).map((a) => JSON.parse(a.entry.Detail ?? 'null'));
}
