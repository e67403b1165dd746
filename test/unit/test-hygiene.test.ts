// The test files themselves: a skip always says which need is missing and why
// (test/support/requirements.ts; .ci/run fails on any skip its machine does not
// expect), nothing is focused or left as a to-do, and temporary directories come
// from the helpers that remove them (docs/testing.md).

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/repo.js";
import { typescriptFiles } from "../support/source-files.js";

const TEST_DIR = path.join(REPO_ROOT, "test");
/** The helpers that implement the rules may use what the rules forbid elsewhere. */
const HELPERS = [
  "test/support/requirements.ts",
  "test/support/temp.ts",
  "test/support/tmpfs.ts",
  "test/support/run-scope.ts",
  "test/backend/support.ts",
];

const RULES: Array<{ what: string; pattern: RegExp }> = [
  { what: "a skip that does not say its need (use itNeeding/describeNeeding)", pattern: /\.(skipIf|runIf)\(/ },
  { what: "a skip with a bare title (use itNeeding/describeNeeding)", pattern: /\b(it|test|describe)\.skip\(\s*["'`]/ },
  { what: "a skip decided inside a test (use itNeeding)", pattern: /\b(ctx|t|context)\.skip\(/ },
  { what: "a focused test", pattern: /\b(it|test|describe)\.only\(/ },
  { what: "a to-do", pattern: /\b(it|test|describe)\.todo\(/ },
  { what: "a temporary directory no helper removes (use tempDir or makeHome)", pattern: /mkdtempSync\(/ },
];

/** "file:line: text" for every line of the test files that breaks a rule. */
function offences(pattern: RegExp): string[] {
  const found: string[] = [];
  for (const file of typescriptFiles(TEST_DIR)) {
    const rel = path.relative(REPO_ROOT, file);
    if (HELPERS.includes(rel) || rel === "test/unit/test-hygiene.test.ts") continue;
    fs.readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (pattern.test(line)) found.push(`${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe("the test files", () => {
  it.each(RULES)("have no $what", ({ pattern }) => {
    expect(offences(pattern)).toEqual([]);
  });

  it("would be caught: each rule matches what it forbids", () => {
    const samples = [
      "describe.skipIf(!BWRAP.available)(",
      'it.skip("later", () => {});',
      "if (!x) ctx.skip();",
      'it.only("this", () => {});',
      'it.todo("that");',
      "fs.mkdtempSync(path.join(os.tmpdir(), 'x-'));",
    ];
    for (const [i, rule] of RULES.entries()) expect(rule.pattern.test(samples[i]!), rule.what).toBe(true);
  });
});
