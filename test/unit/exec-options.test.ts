import { describe, expect, it } from "vitest";
import { executeBody, parseExecOptions } from "../../src/cli/commands/exec.js";
import { parseEnvFile } from "../../src/cli/command-flags.js";
import { UsageError } from "../../src/common/errors.js";

const parse = (argv: string[], raw: Record<string, unknown> = {}) => parseExecOptions(argv, raw, {});

describe("parseExecOptions", () => {
  it("defaults: sandbox default, 2m timeout, client deadline timeout + 30s, a fresh key", () => {
    const a = parse(["echo", "hi"]);
    const b = parse(["echo", "hi"]);
    expect(a).toMatchObject({ sandbox: "default", timeoutMs: 120_000, clientTimeoutMs: 150_000, argv: ["echo", "hi"] });
    expect(a.idempotencyKey).toMatch(/^sbx-[0-9a-f-]{36}$/);
    expect(a.idempotencyKey).not.toBe(b.idempotencyKey);
  });

  it("takes settings as defaults and flags over them", () => {
    const o = parseExecOptions(["true"], { sandbox: "x" }, { sandbox: "y", timeout: "30s" });
    expect(o.sandbox).toBe("x");
    expect(o.timeoutMs).toBe(30_000);
  });

  it.each([
    [[], {}, "no command given"],
    [["ls"], { shell: "ls" }, "not both"],
    [["ls"], { timeout: "0s" }, "out of range"],
    [["ls"], { timeout: "999ms" }, "out of range"],
    [["ls"], { timeout: "11m" }, "out of range"],
    [["ls"], { timeout: "soon" }, "not a duration"],
    [["ls"], { clientTimeout: "x" }, "not a duration"],
    [["ls"], { env: ["NOEQUALS"] }, "expected K=V"],
    [["ls"], { env: ["1BAD=x"] }, "invalid variable name"],
    [["ls"], { sandbox: "../etc" }, "invalid sandbox"],
    [["ls"], { sandbox: "a/b" }, "invalid sandbox"],
    [["ls"], { cwd: "../.." }, "escapes /workspace"],
    [["ls"], { cwd: "/etc" }, "escapes /workspace"],
    [["ls"], { idempotencyKey: "a b" }, "--idempotency-key"],
    [["ls"], { envFile: "/nonexistent/env" }, "--env-file"],
  ])("refuses %j %j (%s)", (argv, raw, message) => {
    expect(() => parse(argv as string[], raw)).toThrow(UsageError);
    expect(() => parse(argv as string[], raw)).toThrow(message);
  });

  it("accepts the timeout bounds and working dirs inside /workspace", () => {
    expect(parse(["ls"], { timeout: "1s" }).timeoutMs).toBe(1000);
    expect(parse(["ls"], { timeout: "10m" }).timeoutMs).toBe(600_000);
    expect(parse(["ls"], { cwd: "sub/dir" }).cwd).toBe("sub/dir");
    expect(parse(["ls"], { cwd: "/workspace/x" }).cwd).toBe("/workspace/x");
  });
});

describe("executeBody", () => {
  it("serializes argv, env, timeout, working_dir and base64 stdin", () => {
    const o = parse(["cat"], { env: ["A=1", "B=x=y"], cwd: "sub", timeout: "5s" });
    const body = JSON.parse(executeBody(o, Buffer.from([0, 255, 10])).toString());
    expect(body).toEqual({
      command: ["cat"],
      working_dir: "/workspace/sub",
      env: { A: "1", B: "x=y" },
      stream: false,
      timeout: 5000,
      stdin: "AP8K",
    });
  });

  it("sends a shell string as a string", () => {
    const body = JSON.parse(executeBody(parse([], { shell: "echo $HOME | wc -c" }), null).toString());
    expect(body.command).toBe("echo $HOME | wc -c");
    expect(body.stdin).toBeUndefined();
  });
});

describe("parseEnvFile", () => {
  it("reads K=V lines, skipping comments and blanks, unquoting values", () => {
    expect(parseEnvFile("# c\n\nA=1\nexport B='two words'\nC=\"q\"\nD=\n", "f")).toEqual({
      A: "1",
      B: "two words",
      C: "q",
      D: "",
    });
  });
  it("names the line of a bad entry", () => {
    expect(() => parseEnvFile("A=1\nnope\n", "vars.env")).toThrow("vars.env:2");
  });
});
