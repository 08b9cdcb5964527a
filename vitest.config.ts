import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs nothing running; `integration` gets PostgreSQL and a Temporal dev server
// from its global set-up. `bash scripts/test.sh` runs both. A third, `histories`, exists only when asked for:
// it records the workflow histories the replay test reads (test/histories/record.test.ts).
const histories =
  process.env.RECORD_HISTORIES === '1'
    ? [
        {
          extends: true,
          test: { name: 'histories', include: ['test/histories/**/*.test.ts'], globalSetup: ['test/support/global-setup.ts'] },
        },
      ]
    : [];
export default defineConfig({
  test: {
    // The Temporal SDK's native runtime does not survive worker threads (sdk-typescript#876).
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: ['test/support/global-setup.ts'] },
      },
      ...histories,
    ],
  },
});
