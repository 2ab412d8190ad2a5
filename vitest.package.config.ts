import { defineConfig } from 'vitest/config';
import { ONE_STACK_OUT, TWO_STACKS_OUT } from './test/package/acceptance-app.js';

/**
 * The package acceptance (`npm run test:package`; docs/deploy.md, "Rask in your own CDK app"):
 * test/package/global-setup.ts packs the construct library, installs it into a fresh app outside
 * the repository and synthesizes it twice; test/package checks the package and the app, and the
 * deploy-confidence suite (test/deploy) runs against the app's assemblies instead of `cdk.out`.
 */
export default defineConfig({
  test: {
    include: ['test/package/**/*.test.ts', 'test/deploy/**/*.test.ts'],
    globalSetup: ['test/package/global-setup.ts'],
    env: { RASK_CDK_OUT: ONE_STACK_OUT, RASK_TASK_TIER_CDK_OUT: TWO_STACKS_OUT },
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
