import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BODY_BYTES, loadAwsConfig, loadLocalConfig, loadMaintenanceConfig } from '../../lib/config.js';

describe('configuration from RASK_* variables', () => {
  it('works with nothing set locally', () => {
    expect(loadLocalConfig({})).toMatchObject({
      RASK_HOST: '127.0.0.1',
      RASK_PORT: 2333,
      RASK_DATA_DIR: './.rask',
      RASK_MAX_BODY_BYTES: DEFAULT_MAX_BODY_BYTES,
      RASK_MANAGED_VERSIONING: true,
    });
    expect(loadLocalConfig({ RASK_PORT: '0', RASK_MANAGED_VERSIONING: 'false' })).toMatchObject({
      RASK_PORT: 0,
      RASK_MANAGED_VERSIONING: false,
    });
  });

  it('stops start-up with a message naming each bad variable', () => {
    expect(() => loadLocalConfig({ RASK_PORT: 'abc', RASK_MANAGED_VERSIONING: 'yes' })).toThrow(
      'invalid configuration: RASK_PORT: must be a whole number; RASK_MANAGED_VERSIONING: must be true or false',
    );
    expect(() => loadLocalConfig({ RASK_PORT: '70000' })).toThrow('RASK_PORT: must be at most 65535');
    expect(() => loadLocalConfig({ RASK_HOST: '' })).toThrow('RASK_HOST: must not be empty');
    expect(() => loadAwsConfig({})).toThrow('RASK_REGISTRY_BUCKET: is required; RASK_WAREHOUSE_BUCKET: is required');
    expect(() =>
      loadAwsConfig({ RASK_REGISTRY_BUCKET: 'reg', RASK_WAREHOUSE_BUCKET: 'wh-b', RASK_VENDING_ROLE_ARN: 'role' }),
    ).toThrow('RASK_VENDING_ROLE_ARN: must be an IAM role ARN');
  });

  it('gives the scheduled pass functions the AWS configuration and their switches, off unless set to true', () => {
    const aws = { RASK_REGISTRY_BUCKET: 'reg', RASK_WAREHOUSE_BUCKET: 'wh-b' };
    expect(loadMaintenanceConfig(aws)).toEqual({ ...loadAwsConfig(aws), RASK_RECONCILE_REPAIR: false, RASK_ORPHANS_DELETE: false, RASK_CHANGE_NOTIFICATIONS: false });
    expect(loadMaintenanceConfig({ ...aws, RASK_CHANGE_NOTIFICATIONS: 'true' })).toMatchObject({ RASK_CHANGE_NOTIFICATIONS: true });
    expect(loadMaintenanceConfig({ ...aws, RASK_RECONCILE_REPAIR: 'true', RASK_ORPHANS_DELETE: 'false' })).toMatchObject({
      RASK_RECONCILE_REPAIR: true,
      RASK_ORPHANS_DELETE: false,
    });
    // Before, anything but `true` silently meant off; a typo is now refused by name.
    expect(() => loadMaintenanceConfig({ ...aws, RASK_ORPHANS_DELETE: 'yes' })).toThrow('invalid configuration: RASK_ORPHANS_DELETE: must be true or false');
    expect(() => loadMaintenanceConfig({ ...aws, RASK_RECONCILE_REPAIR: 'TRUE' })).toThrow('RASK_RECONCILE_REPAIR: must be true or false');
    expect(() => loadMaintenanceConfig({ RASK_RECONCILE_REPAIR: 'true' })).toThrow('RASK_REGISTRY_BUCKET: is required');
  });
});
