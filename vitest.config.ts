import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // dist/ is rebuilt first when src/ is newer: the end-to-end tests spawn bin/sbx, which runs it.
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // end-to-end tests spawn many processes; two cores want few workers
    maxWorkers: 2,
    isolate: false,
  },
});
