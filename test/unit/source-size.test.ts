// Files past what one reader can hold are split along a real seam (TEAM rules, issue
// "Code"): no source file of src/ grows past MAX_LINES.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/cli.js";
import { typescriptFiles } from "../support/source-files.js";

const MAX_LINES = 600;
const SRC = path.join(REPO_ROOT, "src");

describe("the source files of src/", () => {
  it(`are each at most ${MAX_LINES} lines`, () => {
    const files = typescriptFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    const long = files
      .map((file) => ({
        file: path.relative(REPO_ROOT, file),
        lines: fs.readFileSync(file, "utf8").split("\n").length,
      }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });
});
