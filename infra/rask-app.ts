import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { configFromContext, resolveConfig, type RaskConfig } from './config.js';
import { RaskStack } from './rask-stack.js';
import { RaskStateStack } from './state-stack.js';

export interface CreateRaskAppOptions {
  /** Extra context (e.g. `'aws:cdk:bundling-stacks': []` to skip bundling in tests, or `rask:*` settings). */
  readonly context?: Record<string, unknown>;
  /** Explicit settings; when absent they are read from `rask:*` context. */
  readonly config?: Partial<RaskConfig>;
  /** Run cdk-nag's AwsSolutions checks at synth (default true). */
  readonly nag?: boolean;
  /** Where the cloud assembly is written (tests use a temporary directory). */
  readonly outdir?: string;
}

/** Builds the app: used by infra/app.ts (`cdk synth`) and by the template tests. */
export function createRaskApp(options: CreateRaskAppOptions = {}): {
  app: App;
  stack: RaskStack;
  stateStack: RaskStateStack;
  config: RaskConfig;
} {
  const app = new App({ context: { ...options.context }, outdir: options.outdir });
  const config = options.config ? resolveConfig(options.config) : configFromContext(app.node);
  // Two stacks of one app: the data (deployed first, RETAIN) and everything that can be
  // recreated from code. `cdk deploy --all` deploys both in order; `cdk destroy <stackName>`
  // removes only the stateless one.
  const stateStack = new RaskStateStack(app, `${config.stackName}-State`, {
    config,
    description: 'rask: stateful resources (registry and warehouse buckets, work-queue table, admin key, change-event bus)',
  });
  const stack = new RaskStack(app, config.stackName, {
    config,
    state: stateStack,
    description: 'rask: serverless Lance Namespace REST catalog (API Gateway, Lambda, S3)',
    // Environment-agnostic: synth needs no account lookups and no credentials; region and
    // account are resolved at deploy time.
  });
  if (options.nag ?? true) {
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  }
  return { app, stack, stateStack, config };
}
