// @covers CreateNamespace, DeclareTable, ListChanges
/**
 * Durable delivery on AWS (docs/events.md, "Delivery"): a metadata function killed between a
 * door's decisive registry write and its change-log append loses nothing. The relay, as
 * functions/change-relay.ts builds it, re-derives the event of each change whose record proves it
 * (lib/maintenance/change-recovery.ts) once no door can still be appending it.
 *
 * "Killed" on the S3 fake: from a chosen request of a door on, every S3 request of that function
 * hangs for ever, so nothing after it happens (the append, the answer), exactly as if the process
 * had died there. A seeded workload kills doors at random requests (before, at or after the
 * decisive write); after the relay's cycles every change that happened has exactly one event in
 * the log and on the bus, none twice, and no event names a change that did not happen. More
 * cycles add nothing (idempotent).
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAwsApp } from '../../lib/app/aws.js';
import { createAwsRelay, type AwsRelay } from '../../lib/app/aws-relay.js';
import { loadAwsConfig, loadMaintenanceConfig } from '../../lib/config.js';
import type { Router } from '../../lib/http/router.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { callAsAdmin } from '../support/admin-call.js';
import { busChanges, loggedChanges } from '../support/change-log-reads.js';
import { createEventBridgeFake, type EventBridgeFake } from '../support/eventbridge-fake.js';
import { prng } from '../support/prng.js';
import { createS3Fake, type S3Fake } from '../support/s3-fake.js';

const REGISTRY = 'registry-bucket';
const WH = 'wh-bucket';
const BUS = 'rask-bus';
const ENV = { RASK_REGISTRY_BUCKET: REGISTRY, RASK_WAREHOUSE_BUCKET: WH, AWS_REGION: 'us-east-1', RASK_EVENT_BUS_NAME: BUS, RASK_LOG_LEVEL: 'error' };

/**
 * A client of the fake whose requests hang for ever once `kill()` has been armed and the chosen
 * request count is reached: one such client per "function instance".
 */
function killableClient(s3: S3Fake) {
  let countdown = 0;
  let dead = false;
  const requests: string[] = [];
  const client = new Proxy(s3.client, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return (command: { constructor: { name: string }; input?: { Key?: string } }, ...rest: unknown[]) => {
        if (!dead && countdown > 0 && --countdown === 0) dead = true;
        if (dead) {
          requests.push(`${command.constructor.name} ${command.input?.Key ?? ''}`);
          return new Promise(() => {}); // the process is gone: no answer, nothing after it
        }
        return (target.send as (...a: unknown[]) => Promise<unknown>).call(target, command, ...rest);
      };
    },
  }) as S3Client;
  return {
    client,
    /** The `n`-th request from now on is the first that never returns. */
    killAt(n: number) {
      countdown = n;
    },
    dead: () => dead,
    /** The request the process died in. */
    diedIn: () => requests[0],
  };
}

describe('changes whose function died before its append are recovered by the relay (S3 fake)', () => {
  let s3: S3Fake;
  let eb: EventBridgeFake;
  let relay: AwsRelay;
  let healthy: Router;
  const later = (ms = 200_000) => vi.setSystemTime(Date.now() + ms);
  const classMock = mockClient(EventBridgeClient);
  const logged = () => loggedChanges(s3, REGISTRY);
  const onBus = () => busChanges(eb, BUS);

  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    s3 = createS3Fake();
    eb = createEventBridgeFake();
    ({ router: healthy } = await createAwsApp(loadAwsConfig(ENV), metaHandlers, s3.client)); // writes the layout
    relay = await createAwsRelay(loadMaintenanceConfig(ENV), { client: s3.client, eventBridge: eb.client, sleep: async () => {} });
  });
  afterAll(() => {
    classMock.restore();
    vi.useRealTimers();
  });

  it('a seeded workload with kills at random requests: every change that happened has exactly one event, none twice, none invented', async () => {
    const call = async (path: string, body: unknown) => {
      const res = await callAsAdmin(healthy, 'POST', path, body);
      expect(res.status, res.text).toBe(200);
    };
    await call('/v1/namespace/base/create', { id: ['base'] });
    later();
    await relay.run(Date.now() + 60_000); // the first cycle: the recovery starts from here

    const rand = prng(27);
    type Door = { id: string[]; type: string; path: string; exists: string; killed: boolean; diedIn?: string };
    const doors: Door[] = [];
    for (let i = 0; i < 24; i++) {
      // A fresh "function instance" per door that may be killed: its requests hang once it is.
      const instance = killableClient(s3);
      const { router } = await createAwsApp(loadAwsConfig(ENV), metaHandlers, instance.client);
      const table = rand() < 0.5;
      const door: Door = table
        ? { id: ['base', `t${i}`], type: 'dev.rask.table.declared', path: `/v1/table/base%24t${i}/declare`, exists: `/v1/table/base%24t${i}/exists`, killed: false }
        : { id: [`ns${i}`], type: 'dev.rask.namespace.created', path: `/v1/namespace/ns${i}/create`, exists: `/v1/namespace/ns${i}/exists`, killed: false };
      // Two of three doors die, at one of their first eight requests (before, at or after the decisive write).
      if (rand() < 0.67) instance.killAt(1 + Math.floor(rand() * 8));
      const answer = callAsAdmin(router, 'POST', door.path, { id: door.id });
      // Wait until the door has answered or its process has died.
      for (let spins = 0; !instance.dead(); spins++) {
        const settled = await Promise.race([answer.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 5))]);
        if (settled) break;
        if (spins > 2000) throw new Error(`door ${door.path} neither answered nor died`);
      }
      door.killed = instance.dead();
      door.diedIn = instance.diedIn();
      if (!door.killed) expect((await answer).status).toBe(200);
      doors.push(door);
    }
    const killed = doors.filter((d) => d.killed);
    const afterWrite = killed.filter((d) => d.diedIn?.includes('registry/changes/'));
    expect(killed.length, 'the workload kills doors').toBeGreaterThan(4);
    expect(afterWrite.length, 'some die exactly between the decisive write and the append').toBeGreaterThan(0);

    // Within the grace nothing is derived (a door could still be appending); past it, the relay recovers.
    later(30_000);
    expect((await relay.run(Date.now() + 60_000)).recovered).toBe(0);
    later();
    const recovering = await relay.run(Date.now() + 60_000);
    expect(recovering.problems).toEqual([]);
    expect(recovering.recovered).toBeGreaterThanOrEqual(afterWrite.length);
    later();
    await relay.run(Date.now() + 60_000); // the recovered events go to the bus
    later();
    expect(await relay.run(Date.now() + 60_000)).toMatchObject({ recovered: 0, relayed: 0 });

    const log = logged();
    const ids = log.map((e) => e.id);
    expect(new Set(ids).size, 'no event twice in the log').toBe(ids.length);
    expect(onBus().map((e) => e.id).sort(), 'the bus holds the log, once each').toEqual([...ids].sort());
    for (const door of doors) {
      const happened = (await callAsAdmin(healthy, 'POST', door.exists, { id: door.id })).status === 200;
      const events = log.filter((e) => e.type === door.type && JSON.stringify(e.data.id) === JSON.stringify(door.id));
      const why = `${door.path} ${door.killed ? `killed in ${door.diedIn}` : 'answered'}`;
      expect(events.length, why).toBe(happened ? 1 : 0);
      if (!door.killed) expect(happened, why).toBe(true);
      if (door.killed && happened && events[0]?.data.details?.via !== 'registry') {
        // Killed after its append was sent: the door's own event made it.
        expect(door.diedIn, why).not.toContain('registry/changes/');
      }
    }
    expect(log.filter((e) => e.data.details?.via === 'registry').length).toBe(recovering.recovered);
  }, 60_000);
});
