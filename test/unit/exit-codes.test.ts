// Exit codes are named once (src/common/exit-codes.ts, docs/classification.md): a
// command returns ExitCodes.x or the command's own code, never a bare number, and an
// error carries a named one.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/cli.js";
import { typescriptFiles } from "../support/source-files.js";

const RETURNED = /\breturn -?\d+;/;
const CARRIED = [/\bexitCode: -?\d+\b/, /\bExitWith\(-?\d+\)/];

/** Lines that give an exit code as a number literal. */
function bareExitCodes(files: string[], patterns: RegExp[]): string[] {
  return files.flatMap((file) =>
    fs
      .readFileSync(file, "utf8")
      .split("\n")
      .flatMap((line, i) =>
        patterns.some((p) => p.test(line)) ? [`${path.relative(REPO_ROOT, file)}:${i + 1}: ${line.trim()}`] : [],
      ),
  );
}

describe("exit codes", () => {
  it("are never bare numbers in what a command returns (every number a run function returns is an exit code)", () => {
    const commands = [
      ...typescriptFiles(path.join(REPO_ROOT, "src", "cli", "commands")),
      path.join(REPO_ROOT, "src", "cli", "main.ts"),
    ];
    expect(bareExitCodes(commands, [RETURNED])).toEqual([]);
  });

  it("are never bare numbers where an error or a runtime carries one", () => {
    // The backend's exit codes are the commands' own (126, 127 as a shell gives them): not sbx's.
    const everywhere = typescriptFiles(path.join(REPO_ROOT, "src")).filter(
      (f) => !f.startsWith(path.join(REPO_ROOT, "src", "backend")),
    );
    expect(bareExitCodes(everywhere, CARRIED)).toEqual([]);
  });

  it("the check itself sees a bare one, and a named one passes", () => {
    expect(RETURNED.test("  return 0;")).toBe(true);
    expect(RETURNED.test("  return ExitCodes.ok;")).toBe(false);
    expect(CARRIED.some((p) => p.test("{ exitCode: 130, hint })"))).toBe(true);
    expect(CARRIED.some((p) => p.test("throw new ExitWith(255);"))).toBe(true);
    expect(CARRIED.some((p) => p.test("{ exitCode: ExitCodes.cancelled }"))).toBe(false);
  });
});
