// The README's commands, as a new user types them: the end-to-end suite against the
// release binary, written with a relative path, runs what that path names.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, testBinaryFrom } from "../support/cli.js";

const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8").replace(/\s*\n\s*/g, " ");

describe("README.md", () => {
  it("runs the end-to-end suite against the binary its relative SBX_TEST_BINARY names", () => {
    const written = /`SBX_TEST_BINARY=(\S+) npx vitest run test\/e2e`/.exec(readme);
    expect(written, "the README's command for the binary's end-to-end run").not.toBeNull();
    const given = written![1]!;
    expect(path.isAbsolute(given)).toBe(false);
    // Resolved from where vitest was started (the checkout), wherever a test spawns from.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-readme-"));
    try {
      fs.mkdirSync(path.join(dir, path.dirname(given)), { recursive: true });
      fs.writeFileSync(path.join(dir, given), "");
      expect(testBinaryFrom({ SBX_TEST_BINARY: given }, dir)).toBe(path.join(dir, given));
      expect(() => testBinaryFrom({ SBX_TEST_BINARY: "no/such/sbx" }, dir)).toThrow(
        /SBX_TEST_BINARY=no\/such\/sbx: no such file .*npm run build:binary/,
      );
      expect(testBinaryFrom({}, dir)).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
