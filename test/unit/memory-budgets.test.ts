/**
 * The LanceDB cache budgets (lib/config.ts, lanceCacheBudgets; docs/data-plane.md, "Memory"):
 * configured values win and are validated; otherwise a fixed share of the function's memory on
 * Lambda, or of the machine's (capped) locally, that always leaves room for the runtime and for
 * the largest request and answer the data plane allows.
 */
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_RESULT_BYTES,
  lanceCacheBudgets,
  largestAnswerBytes,
  loadAwsConfig,
  loadLocalConfig,
  LOCAL_LANCE_CACHE_CAP_BYTES,
  RUNTIME_BASELINE_BYTES,
  unknownLocalVariables,
} from '../../lib/config.js';
import { MIN_SESSION_ITEMS, SESSION_BYTES_PER_ITEM, sessionItemLimit } from '../../lib/adapters/lance/session.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const limits = { RASK_MAX_BODY_BYTES: DEFAULT_MAX_BODY_BYTES, RASK_MAX_RESULT_BYTES: DEFAULT_MAX_RESULT_BYTES };
const aws = { RASK_REGISTRY_BUCKET: 'registry', RASK_WAREHOUSE_BUCKET: 'warehouse' };
const bigMachine = { totalBytes: 64 * GIB };
const lambda = (mb: number, extra: object = {}) => lanceCacheBudgets({ ...limits, ...extra }, { AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(mb) }, bigMachine);

describe('LanceDB cache budgets', () => {
  it('on a 2,048 MB function leave room for the runtime and the largest answer the data plane allows', () => {
    const b = lambda(2048);
    expect(b).toMatchObject({ basis: 'lambda', memoryBytes: 2048 * MIB, indexBytes: 384 * MIB, metadataBytes: 128 * MIB });
    const largest = largestAnswerBytes(limits);
    // A 6 MB body and a 4 MiB answer, each held a few times over while a request is served.
    expect(largest).toBeGreaterThanOrEqual(DEFAULT_MAX_BODY_BYTES + DEFAULT_MAX_RESULT_BYTES);
    const headroom = b.memoryBytes - (b.indexBytes + b.metadataBytes) - RUNTIME_BASELINE_BYTES - largest;
    // Full caches, the runtime and the largest answer together use well under the function's memory.
    expect(headroom).toBeGreaterThan(GIB);
  });

  it('follow the function memory, and shrink when a larger answer is allowed', () => {
    expect(lambda(4096)).toMatchObject({ indexBytes: 768 * MIB, metadataBytes: 256 * MIB });
    const small = lambda(512);
    // A quarter (128 MiB) would not leave the runtime and the answer their room: what remains does.
    expect(small.indexBytes + small.metadataBytes).toBeLessThanOrEqual(512 * MIB - RUNTIME_BASELINE_BYTES - largestAnswerBytes(limits));
    const wide = lambda(2048, { RASK_MAX_RESULT_BYTES: 256 * MIB });
    expect(wide.indexBytes + wide.metadataBytes + RUNTIME_BASELINE_BYTES + largestAnswerBytes({ ...limits, RASK_MAX_RESULT_BYTES: 256 * MIB })).toBeLessThanOrEqual(
      2048 * MIB,
    );
  });

  it('locally take a share of the machine, capped, and of a cgroup limit when that is lower', () => {
    const local = lanceCacheBudgets(limits, {}, bigMachine);
    expect(local).toMatchObject({ basis: 'machine' });
    expect(local.indexBytes + local.metadataBytes).toBe(LOCAL_LANCE_CACHE_CAP_BYTES);
    const contained = lanceCacheBudgets(limits, {}, { totalBytes: 64 * GIB, constrainedBytes: GIB });
    expect(contained.memoryBytes).toBe(GIB);
    expect(contained.indexBytes + contained.metadataBytes).toBe(GIB / 4);
  });

  it('take configured values as given, validated at start-up', () => {
    const env = { RASK_LANCE_INDEX_CACHE_MB: '32', RASK_LANCE_METADATA_CACHE_MB: '8' };
    const config = loadAwsConfig({ ...aws, ...env });
    expect(lanceCacheBudgets(config, { AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '2048' })).toMatchObject({
      basis: 'configured',
      indexBytes: 32 * MIB,
      metadataBytes: 8 * MIB,
    });
    expect(lanceCacheBudgets(loadLocalConfig(env), {}, bigMachine)).toMatchObject({ indexBytes: 32 * MIB, metadataBytes: 8 * MIB });
    for (const bad of ['0', '-1', '1.5', 'lots']) {
      expect(() => loadAwsConfig({ ...aws, RASK_LANCE_METADATA_CACHE_MB: bad })).toThrow(ConfigError);
      expect(() => loadLocalConfig({ RASK_LANCE_INDEX_CACHE_MB: bad })).toThrow(/RASK_LANCE_INDEX_CACHE_MB/);
    }
    expect(unknownLocalVariables({ ...env, RASK_MEMORY_STATS_MS: '1000' })).toEqual([]);
  });
});

describe('the session entry limit', () => {
  // Entries past the byte budget cost ~3–4 KiB each, and since a renewed session is collected at
  // its last close a renewal leaves little behind: metadata / 4 KiB (lib/adapters/lance/session.ts).
  it('is the metadata budget over 4 KiB, at least MIN_SESSION_ITEMS, unless set', () => {
    expect(SESSION_BYTES_PER_ITEM).toBe(4096);
    expect(sessionItemLimit({ metadataBytes: 64 * MIB })).toBe(16_384);
    expect(sessionItemLimit({ metadataBytes: 128 * MIB })).toBe(32_768);
    expect(sessionItemLimit({ metadataBytes: 6 * MIB })).toBe(MIN_SESSION_ITEMS);
    expect(sessionItemLimit({ metadataBytes: 64 * MIB, itemLimit: 40 })).toBe(40);
  });
});
