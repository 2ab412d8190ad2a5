/** The work-queue contract on the registry's object store (fs store, jittered calls). */
import { keys } from '../../lib/registry/keys.js';
import { servicesOver } from '../support/services.js';
import { runWorkQueueContract } from './work-queue.suite.js';

runWorkQueueContract('registry store on fs, jittered', async () => {
  const f = await servicesOver('fs', { jitterMs: 2 });
  const s = f.services;
  return {
    services: s,
    plantUnreadable: async (id) => void (await s.registry.store.putIfAbsent(keys.liveJob(s.project, id), '{not json')),
    cleanup: () => f.cleanup(),
  };
});
