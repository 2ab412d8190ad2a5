import { App, RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, RaskConfigError, configFromContext, resolveConfig } from '../../infra/config.js';

describe('deployment configuration', () => {
  it('defaults to a retained, versioned-registry, stage "prod" deployment', () => {
    expect(resolveConfig()).toEqual(DEFAULT_CONFIG);
    expect(DEFAULT_CONFIG.removalPolicy).toBe(RemovalPolicy.RETAIN);
  });

  it('reads rask:* context, including command-line strings', () => {
    const app = new App({
      context: {
        'rask:stageName': 'dev',
        'rask:removalPolicy': 'destroy',
        'rask:trashGraceDays': '14',
        'rask:managedVersioning': 'false',
        'rask:warehouseBucketName': 'existing-lake',
        'rask:authorizerCacheSeconds': 60,
        'rask:functionMode': 'per-operation',
        'unrelated-context': 'ignored',
      },
    });
    expect(configFromContext(app.node)).toMatchObject({
      stageName: 'dev',
      removalPolicy: RemovalPolicy.DESTROY,
      trashGraceDays: 14,
      managedVersioning: false,
      warehouseBucketName: 'existing-lake',
      authorizerCacheSeconds: 60,
      functionMode: 'per-operation',
    });
  });

  it('rejects bad values with the name of the setting', () => {
    const bad: Record<string, unknown>[] = [
      { stageName: 'has space' },
      { removalPolicy: 'snapshot' },
      { trashGraceDays: -1 },
      { trashGraceDays: '1.5' },
      { managedVersioning: 'yes' },
      { warehousePrefix: '' },
      { warehousePrefix: 'no-slash' },
      { warehousePrefix: '/abs/' },
      { registryPrefix: 'a//b/' },
      { registryPrefix: '../x/' },
      { warehouseBucketName: 'Not_A_Bucket' },
      { logRetentionDays: 100 },
      { throttleRateLimit: 500, throttleBurstLimit: 100 },
      { stagename: 'typo' },
      { functionMode: 'per-op' },
      { functionMode: true },
    ];
    for (const raw of bad) {
      expect(() => resolveConfig(raw as never), JSON.stringify(raw)).toThrow(RaskConfigError);
    }
    expect(() => resolveConfig({ trashGraceDays: -1 })).toThrow(/rask:trashGraceDays/);
    expect(() => resolveConfig({ functionMode: 'per-op' } as never)).toThrow(/rask:functionMode.*"grouped" or "per-operation"/);
  });
});
