// One test runner for the whole repository. GPU tests (test/gpu) run only
// through `npm run test:gpu`, on a machine with a GPU.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'profiler/**/*.test.ts', 'renderer/**/*.test.ts'],
    exclude: ['node_modules/**', 'test/gpu/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The tests' caches in a directory of the run's own (test/cache-dir.setup.ts).
    globalSetup: ['test/cache-dir.setup.ts'],
  },
});
