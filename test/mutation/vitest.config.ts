// The vitest configuration StrykerJS runs the pure cores' tests with (stryker.config.mjs):
// only the tests listed in cores.json, without the suite's global setup (no dist/
// build, no run directory: these tests touch no process and no file).

import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const cores = JSON.parse(fs.readFileSync(new URL("./cores.json", import.meta.url), "utf8")) as Record<string, string[]>;

export default defineConfig({
  // The repository, wherever vitest is started from (the paths in cores.json are relative to it).
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    include: [...new Set(Object.values(cores).flat())],
  },
});
