import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Need a fresh synth (vitest.deploy.config.ts) or a packed package (vitest.package.config.ts):
    // .ci/run runs both after `npm test`.
    exclude: ['test/deploy/**', 'test/package/**', '**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
