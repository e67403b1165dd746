// The small messages of issue 30, item 14: each said once, in sbx's words, with what
// to do. In-process against a real backend on the home's socket.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/cli.js";
import { type LocalHome, localHome } from "../support/in-process.js";

let local: LocalHome;

beforeAll(async () => {
  local = await localHome("sbx-small-messages-");
});
afterAll(() => local.close());

describe("duration flags say the range they take", () => {
  it("exec --timeout 0: not a duration, and which ones are (1s to 10m)", async () => {
    const r = await local.sbx(["exec", "--timeout", "0", "--", "true"]);
    expect(r.code).toBe(125);
    expect(r.stderr).toContain('--timeout "0" is not a duration: give one from 1s to 10m, with its unit');
  });

  it("exec and jobs run share the floor of 1s", async () => {
    const exec = await local.sbx(["exec", "--timeout", "500ms", "--", "true"]);
    expect(exec.code).toBe(125);
    expect(exec.stderr).toContain("--timeout 500ms is out of range: give one from 1s to 10m");
    const job = await local.sbx(["jobs", "run", "--timeout", "500ms", "--", "true"]);
    expect(job.code).toBe(125);
    expect(job.stderr).toContain("--timeout 500ms is out of range: give one from 1s to 1h");
  });
});

describe("sbx cp from stdin that the backend refuses", () => {
  it('says "nothing was written" once', async () => {
    const r = await local.sbx(["cp", "-", "default:/workspace/x"], { input: Buffer.alloc(2048, "not a tar") });
    expect(r.code).toBe(125);
    expect(r.stderr).toContain("nothing was written");
    expect(r.stderr).not.toContain("nothing was written; nothing was written");
  });
});

describe("sbx process logs", () => {
  it("says where to read on from only with --verbose", async () => {
    const started = await local.sbx(["process", "start", "--", "sh", "-c", "echo hi"]);
    expect(started.code, started.stderr).toBe(0);
    const id = started.stdout.trim();
    const r = await local.sbx(["process", "logs", id, "-f"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("hi\n");
    expect(r.stderr).toBe("");
    const verbose = await local.sbx(["process", "logs", id, "-f", "--verbose"]);
    expect(verbose.stderr).toContain("next offset stdout 3, stderr 0");
  });
});

describe("sbx exec of a directory", () => {
  it('says "is a directory" (126), as a shell does', async () => {
    const r = await local.sbx(["exec", "--", "/workspace"]);
    expect(r.code).toBe(126);
    expect(r.stderr).toContain("sbx: /workspace: is a directory");
    const relative = await local.sbx(["exec", "--", "./"]);
    expect(relative.code).toBe(126);
    expect(relative.stderr).toContain("sbx: ./: is a directory");
  });
});

describe("the README's exit-code table", () => {
  it("has a row for every exit code sbx gives of its own", () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
    for (const code of [0, 70, 74, 75, 78, 124, 125, 130, 141, 200, 201, 255]) {
      expect(readme, `exit ${code}`).toMatch(new RegExp(`^\\| ${code} \\|`, "m"));
    }
  });
});
