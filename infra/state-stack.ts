import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { RaskCatalogState, SHARED_SETTING_KEYS, STATE_SETTING_KEYS, type RaskStateSettings } from './catalog-state.js';
import type { RaskConfig } from './config.js';

export { stateParameterName, type StateRefs, type StorageRefs } from './catalog-state.js';

export interface RaskStateStackProps extends StackProps {
  readonly config: RaskConfig;
}

/**
 * The standalone app's stateful stack: one `RaskCatalogState` (infra/catalog-state.ts) and
 * nothing else. The construct's id is `Default`, which CDK leaves out of logical ids, so every
 * resource keeps the logical id it had before the construct existed (a changed id would replace
 * a bucket).
 */
export class RaskStateStack extends Stack {
  readonly state: RaskCatalogState;
  readonly storage: RaskCatalogState['storage'];
  readonly queue: RaskCatalogState['queue'];
  readonly adminKey: RaskCatalogState['adminKey'];
  readonly changeEvents: RaskCatalogState['changeEvents'];
  readonly config: RaskConfig;

  constructor(scope: Construct, id: string, props: RaskStateStackProps) {
    super(scope, id, props);
    this.config = props.config;
    this.state = new RaskCatalogState(this, 'Default', stateSettings(props.config));
    this.storage = this.state.storage;
    this.queue = this.state.queue;
    this.adminKey = this.state.adminKey;
    this.changeEvents = this.state.changeEvents;
  }
}

/** The state's share of the app's settings. */
export function stateSettings(config: RaskConfig): Partial<RaskStateSettings> {
  const keys: readonly string[] = [...STATE_SETTING_KEYS, ...SHARED_SETTING_KEYS];
  return Object.fromEntries(Object.entries(config).filter(([k, v]) => keys.includes(k) && v !== undefined));
}
