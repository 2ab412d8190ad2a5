/**
 * Concurrency caps (issue 28): the jobs function and each maintenance pass reserve a bounded
 * number of concurrent executions, so a backlog of index builds cannot take the account's
 * concurrency from the API; the API functions reserve nothing (they take what the account has).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MAINTENANCE_PASSES } from '../../infra/constructs/maintenance.js';
import { DEFAULT_CONFIG } from '../../infra/config.js';
import { resourcesOfType, synthRask } from './helpers.js';

const reservations = (built: ReturnType<typeof synthRask>) =>
  Object.fromEntries(
    Object.entries(resourcesOfType(built.template, 'AWS::Lambda::Function'))
      .filter(([, f]) => f.Properties!.Runtime?.startsWith('nodejs'))
      .map(([id, f]) => [id, f.Properties!.ReservedConcurrentExecutions as number | undefined]),
  );

const pick = (all: Record<string, number | undefined>, prefix: string) => Object.entries(all).filter(([id]) => id.startsWith(prefix));

describe('reserved concurrency', () => {
  let defaults: ReturnType<typeof synthRask>;
  beforeAll(() => {
    defaults = synthRask({ alarmEmail: 'oncall@example.com' });
  });

  it('caps the jobs function and every maintenance pass by default, and leaves the API functions unreserved', () => {
    const all = reservations(defaults);
    expect(DEFAULT_CONFIG.jobsReservedConcurrency).toBe(5);
    expect(DEFAULT_CONFIG.maintenanceReservedConcurrency).toBe(2);
    expect(pick(all, 'FunctionsJobs')).toEqual([[expect.any(String), 5]]);
    const passes = pick(all, 'Maintenance');
    expect(passes).toHaveLength(MAINTENANCE_PASSES.length);
    for (const [id, n] of passes) expect(n, id).toBe(2);
    for (const prefix of ['FunctionsMeta', 'FunctionsData', 'Auth']) {
      const found = pick(all, prefix);
      expect(found.length, prefix).toBeGreaterThan(0);
      for (const [id, n] of found) expect(n, id).toBeUndefined();
    }
  });

  it('takes the caps from settings, and reserves nothing with "none"', () => {
    const all = reservations(synthRask({ alarmEmail: 'oncall@example.com', jobsReservedConcurrency: 12, maintenanceReservedConcurrency: 'none' }));
    expect(pick(all, 'FunctionsJobs').map(([, n]) => n)).toEqual([12]);
    for (const [id, n] of pick(all, 'Maintenance')) expect(n, id).toBeUndefined();
  });
});
