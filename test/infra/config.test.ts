import { App, RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, RaskConfigError, configFromContext, resolveConfig } from '../../infra/config.js';
import { authModeEnvironment } from '../../infra/constructs/auth.js';

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
        'rask:storagePrefixes': 'projects/, teams/',
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
      storagePrefixes: ['projects/', 'teams/'],
    });
  });

  it('rejects bad values with the name of the setting', () => {
    const bad: Record<string, unknown>[] = [
      { ratePrincipalPerSecond: -1 },
      { rateProjectBurst: 0 },
      { quotaTables: 'many' },
      { stageName: 'has space' },
      { removalPolicy: 'snapshot' },
      { trashGraceDays: -1 },
      { trashGraceDays: '1.5' },
      { storagePrefixes: '../etc/' },
      { storagePrefixes: '/abs/' },
      { storagePrefixes: [] },
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

  it('reads the concurrency caps from context, refusing 0 (which would stop the function) and non-numbers', () => {
    const node = new App({ context: { 'rask:jobsReservedConcurrency': '8', 'rask:maintenanceReservedConcurrency': 'none' } }).node;
    expect(configFromContext(node)).toMatchObject({ jobsReservedConcurrency: 8, maintenanceReservedConcurrency: 'none' });
    expect(resolveConfig()).toMatchObject({ jobsReservedConcurrency: 5, maintenanceReservedConcurrency: 2 });
    for (const bad of [0, '0', -1, 'many', 1001, '2.5']) {
      expect(() => resolveConfig({ jobsReservedConcurrency: bad } as never), String(bad)).toThrow(/rask:jobsReservedConcurrency must be a whole number of concurrent executions from 1 to 1000, or "none"/);
    }
    expect(() => resolveConfig({ maintenanceReservedConcurrency: 0 })).toThrow(/rask:maintenanceReservedConcurrency/);
  });

  it('reads the per-IP WAF rate from context, or off', () => {
    expect(configFromContext(new App({ context: { 'rask:wafRateLimit': '1200' } }).node)).toMatchObject({ wafRateLimit: 1200 });
    expect(configFromContext(new App({ context: { 'rask:wafRateLimit': 'off' } }).node)).toMatchObject({ wafRateLimit: 'off' });
    expect(resolveConfig()).toMatchObject({ wafRateLimit: 3000 });
    for (const bad of [5, 'lots', 2.5]) expect(() => resolveConfig({ wafRateLimit: bad } as never)).toThrow(/rask:wafRateLimit must be a whole number of requests per client IP in 5 minutes/);
  });

  it('routes alarms to an e-mail or an existing topic, not both, validated', () => {
    const topic = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';
    expect(configFromContext(new App({ context: { 'rask:alarmEmail': 'oncall@example.com' } }).node)).toMatchObject({ alarmEmail: 'oncall@example.com' });
    expect(configFromContext(new App({ context: { 'rask:alarmTopicArn': topic } }).node)).toMatchObject({ alarmTopicArn: topic });
    expect(() => resolveConfig({ alarmEmail: 'not-an-address' })).toThrow(/rask:alarmEmail must be an e-mail address/);
    expect(() => resolveConfig({ alarmTopicArn: 'ops-alarms' })).toThrow(/rask:alarmTopicArn must be an SNS topic ARN/);
    expect(() => resolveConfig({ alarmEmail: 'oncall@example.com', alarmTopicArn: topic })).toThrow(/rask:alarmEmail only applies to the topic the stack creates/);
  });

  describe('OIDC token settings (rask:jwt*)', () => {
    const JWT = { jwtIssuer: 'https://login.example.com/', jwtAudience: 'rask-api', jwtJwksUrl: 'https://login.example.com/.well-known/jwks.json' };

    it('reads the issuer, audience, JWKS URL and principal claim from context', () => {
      const app = new App({ context: { 'rask:jwtIssuer': JWT.jwtIssuer, 'rask:jwtAudience': JWT.jwtAudience, 'rask:jwtJwksUrl': JWT.jwtJwksUrl, 'rask:jwtPrincipalClaim': 'email' } });
      expect(configFromContext(app.node)).toMatchObject({ ...JWT, jwtPrincipalClaim: 'email' });
      expect(resolveConfig()).not.toHaveProperty('jwtIssuer', expect.anything());
    });

    it('refuses them partly set, with a cached authorizer, or malformed, naming the keys', () => {
      expect(() => resolveConfig({ jwtIssuer: JWT.jwtIssuer, jwtAudience: JWT.jwtAudience })).toThrow(/missing rask:jwtJwksUrl/);
      expect(() => resolveConfig({ jwtJwksUrl: JWT.jwtJwksUrl })).toThrow(/missing rask:jwtIssuer, rask:jwtAudience/);
      expect(() => resolveConfig({ jwtPrincipalClaim: 'email' })).toThrow(/rask:jwtPrincipalClaim only applies/);
      expect(() => resolveConfig({ ...JWT, authorizerCacheSeconds: 60 })).toThrow(/rask:authorizerCacheSeconds must be 0 with OIDC tokens/);
      expect(() => resolveConfig({ ...JWT, jwtJwksUrl: 'http://login.example.com/jwks' })).toThrow(/rask:jwtJwksUrl must be an https:\/\/ URL/);
      expect(() => resolveConfig({ ...JWT, jwtAudience: 'two words' })).toThrow(/rask:jwtAudience/);
      expect(() => resolveConfig({ ...JWT, jwtPrincipalClaim: 'a claim' })).toThrow(/rask:jwtPrincipalClaim/);
      expect(resolveConfig(JWT)).toMatchObject(JWT);
    });

    it('takes a maximum token age with them, validated', () => {
      expect(resolveConfig({ ...JWT, jwtMaxAgeSeconds: 3600 })).toMatchObject({ jwtMaxAgeSeconds: 3600 });
      expect(resolveConfig(JWT)).not.toHaveProperty('jwtMaxAgeSeconds');
      expect(() => resolveConfig({ ...JWT, jwtMaxAgeSeconds: 10 })).toThrow(/rask:jwtMaxAgeSeconds/);
      expect(() => resolveConfig({ jwtMaxAgeSeconds: 3600 })).toThrow(/rask:jwtMaxAgeSeconds only applies/);
      expect(authModeEnvironment(resolveConfig({ ...JWT, jwtMaxAgeSeconds: 3600 }), true)).toMatchObject({ RASK_JWT_MAX_AGE_SECONDS: '3600' });
    });
  });
});
