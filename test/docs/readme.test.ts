// The README's commands, as a new user types them: the two commands of the quick
// start, and where the first one fails for want of a prebuilt SQLite driver (an offline
// or locked-down machine), its message points to the README's section and gives the
// same command; the end-to-end suite against the release binary, written with a
// relative path, runs what that path names.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { INSTALL_OFFLINE_SECTION } from "../../src/platform/sqlite.js";
import { REPO_ROOT, testBinaryFrom } from "../support/cli.js";
import { tempDir } from "../support/temp.js";

const text = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
const readme = text.replace(/\s*\n\s*/g, " ");

/** The lines of the first ```sh block after `after` (a heading, or the start). */
function shBlock(after: string): string[] {
  const from = text.indexOf(after);
  expect(from, after).toBeGreaterThanOrEqual(0);
  const start = text.indexOf("```sh\n", from) + "```sh\n".length;
  return text.slice(start, text.indexOf("```", start)).trimEnd().split("\n");
}

const checkInstall = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts", "check-install.mjs"), ...args], { encoding: "utf8" });

describe("README.md", () => {
  it("starts with the two commands, and says what to do where the SQLite driver must be built", () => {
    expect(shBlock("# sbx")).toEqual(["npm install && ./bin/sbx exec -- echo hello", "npm test"]);
    const section = `### ${INSTALL_OFFLINE_SECTION}`;
    const [offline] = shBlock(section);
    expect(offline).toMatch(/^npm_config_nodedir=.* npm install$/);
    // npm does not stop at the driver's own failure (an optional dependency): this check does.
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
    expect(pkg.optionalDependencies["better-sqlite3"]).toBeDefined();
    expect(pkg.dependencies["better-sqlite3"]).toBeUndefined();
    expect(pkg.scripts.postinstall).toBe("node scripts/check-install.mjs");
    const failed = checkInstall("no-such-sqlite-driver");
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain("sbx: no-such-sqlite-driver (the SQLite driver sbx uses on Node) did not install");
    expect(failed.stderr).toContain(`\n  ${offline}\n`);
    expect(failed.stderr).toContain(`See README.md, "${INSTALL_OFFLINE_SECTION}".`);
    // Installed here: the check is silent.
    expect(checkInstall()).toMatchObject({ status: 0, stderr: "" });
  });

  it("runs the end-to-end suite against the binary its relative SBX_TEST_BINARY names", () => {
    const written = /`SBX_TEST_BINARY=(\S+) npx vitest run test\/e2e`/.exec(readme);
    expect(written, "the README's command for the binary's end-to-end run").not.toBeNull();
    const given = written![1]!;
    expect(path.isAbsolute(given)).toBe(false);
    // Resolved from where vitest was started (the checkout), wherever a test spawns from.
    const dir = tempDir("sbx-readme-");
    fs.mkdirSync(path.join(dir, path.dirname(given)), { recursive: true });
    fs.writeFileSync(path.join(dir, given), "");
    expect(testBinaryFrom({ SBX_TEST_BINARY: given }, dir)).toBe(path.join(dir, given));
    expect(() => testBinaryFrom({ SBX_TEST_BINARY: "no/such/sbx" }, dir)).toThrow(
      /SBX_TEST_BINARY=no\/such\/sbx: no such file .*npm run build:binary/,
    );
    expect(testBinaryFrom({}, dir)).toBeUndefined();
  });
});
