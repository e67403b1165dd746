import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // end-to-end tests spawn many processes; two cores want few workers
    maxWorkers: 2,
  },
});
