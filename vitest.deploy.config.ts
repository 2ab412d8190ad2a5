import { defineConfig } from 'vitest/config';

/**
 * The deploy-confidence suite (test/deploy): runs the synthesized artifacts in `cdk.out`, so it
 * needs a fresh `npm run synth` first. `.ci/run` runs it right after synth; `npm run test:deploy`
 * does both by hand.
 */
export default defineConfig({
  test: {
    include: ['test/deploy/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
  },
});
