// Mutation testing of the pure cores (docs/testing.md, "Mutation testing"): StrykerJS
// changes each core's code one small way at a time (a mutant) and runs the core's own
// tests against it; a mutant no test notices "survives". `npm run test:mutation`.
//
// The cores and their tests are listed in cores.json, one line each: to mutate another
// file, add `"src/…/file.ts": ["test/…/file.test.ts"]` there. The tests run through
// vitest.config.ts beside this file (only those tests: no global setup, nothing spawned).

import fs from "node:fs";

const cores = JSON.parse(fs.readFileSync(new URL("./cores.json", import.meta.url), "utf8"));

export default {
  packageManager: "npm",
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "test/mutation/vitest.config.ts", related: false },
  mutate: Object.keys(cores),
  coverageAnalysis: "perTest",
  // Two cores here, shared with other work: never more than two test processes.
  concurrency: 2,
  // The cores' tests take milliseconds: a mutant that makes one loop forever is a timeout (killed) soon.
  timeoutMS: 3000,
  reporters: ["clear-text", "progress", "json", "html"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/index.html" },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
  ignorePatterns: ["dist", "reports", "bench/out", ".sbx-test", "man", "completions"],
};
