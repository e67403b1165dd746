// Bad input is refused before anything is dispatched: exit 125, a one-line reason on
// stderr, nothing on stdout, no request at the server and no receipt. In-process
// through main(); that node itself does not take --env-file is test/e2e/node-flags.

import { describe, expect, it, type TestContext } from "vitest";
import { lines, makeHome, removeHome, type SbxResult } from "../support/cli.js";
import { runMain, runMainJson } from "../support/in-process.js";
import { type MisbehavingServer, startMisbehavingServer } from "../support/misbehaving-server.js";

interface Case {
  name: string;
  /** argv after `sbx`, with API_URL standing for the server's URL. */
  args: string[];
  reason: RegExp;
  /** Text that must appear somewhere on stderr (a suggestion). */
  suggests?: string;
}

const API = "API_URL";
const exec = (...flags: string[]) => ["exec", "--api-url", API, ...flags];

const cases: Case[] = [
  { name: "--timeout 0s", args: exec("--timeout", "0s", "--", "echo", "hi"), reason: /--timeout 0s is out of range/ },
  {
    name: "--timeout 11m",
    args: exec("--timeout", "11m", "--", "echo", "hi"),
    reason: /--timeout 11m is out of range/,
  },
  {
    name: "--timeout banana",
    args: exec("--timeout", "banana", "--", "echo", "hi"),
    reason: /"banana" is not a duration/,
  },
  { name: "no command", args: exec(), reason: /no command given/ },
  { name: "no command after --", args: exec("--"), reason: /no command given/ },
  {
    name: "--env FOO (no =)",
    args: exec("--env", "FOO", "--", "echo", "hi"),
    reason: /--env: expected K=V, got "FOO"/,
  },
  { name: "-s ../etc", args: exec("-s", "../etc", "--", "echo", "hi"), reason: /invalid sandbox "\.\.\/etc"/ },
  { name: "-s a/b", args: exec("-s", "a/b", "--", "echo", "hi"), reason: /invalid sandbox "a\/b"/ },
  {
    name: "--cwd ../..",
    args: exec("--cwd", "../..", "--", "echo", "hi"),
    reason: /--cwd "\.\.\/\.\." escapes \/workspace/,
  },
  { name: "--cwd /etc", args: exec("--cwd", "/etc", "--", "echo", "hi"), reason: /--cwd "\/etc" escapes \/workspace/ },
  {
    name: "--env-file that does not exist",
    args: exec("--env-file", "/nonexistent/sbx.env", "--", "echo", "hi"),
    reason: /^sbx: --env-file \/nonexistent\/sbx\.env: no such file$/,
  },
  {
    name: "jobs submit of a file that does not exist says so in words",
    args: ["jobs", "submit", "--api-url", API, "nosuch.json"],
    reason: /^sbx: cannot read nosuch\.json: no such file$/,
  },
  {
    name: "--stream --detach (a conflict, not a silently ignored flag)",
    args: exec("--stream", "--detach", "--", "echo", "hi"),
    reason: /^sbx: --stream and --detach cannot be used together/,
    suggests: "hint: follow a detached command's output with `sbx logs EXE -f`",
  },
  {
    name: "--timeout 2h points to the supervised process, the one that takes 2h",
    args: exec("--timeout", "2h", "--", "echo", "hi"),
    reason: /^sbx: --timeout 2h is out of range: give one from 1s to 10m$/,
    suggests: "hint: longer work runs as a supervised process: sbx process start --timeout 2h -- CMD (up to 24h)",
  },
  {
    name: "--timeout 30m points to jobs run and process start",
    args: exec("--timeout", "30m", "--", "echo", "hi"),
    reason: /^sbx: --timeout 30m is out of range/,
    suggests:
      "hint: longer work runs as a job: sbx jobs run --timeout 30m -- CMD (up to 1h), or as a supervised process: sbx process start --timeout 30m -- CMD (up to 24h)",
  },
  {
    name: "jobs run --timeout 2h points to process start",
    args: ["jobs", "run", "--api-url", API, "--timeout", "2h", "--", "echo", "hi"],
    reason: /^sbx: --timeout 2h is out of range/,
    suggests: "hint: longer work runs as a supervised process: sbx process start --timeout 2h",
  },
  { name: "--frobnicate", args: exec("--frobnicate", "--", "echo", "hi"), reason: /unknown option '--frobnicate'/ },
  {
    name: "--tiemout (a near miss)",
    args: exec("--tiemout", "5s", "--", "echo", "hi"),
    reason: /unknown option '--tiemout'/,
    suggests: "Did you mean --timeout?",
  },
  {
    name: "--idempotency-key 'a b'",
    args: exec("--idempotency-key", "a b", "--", "echo", "hi"),
    reason: /--idempotency-key must be 1-255 characters/,
  },
  {
    name: "receipts prune --before 1x (names the bad value, not a missing one)",
    args: ["receipts", "prune", "--before", "1x"],
    reason: /^sbx: --before "1x": use an ISO-8601 time or a duration ago like 30d$/,
  },
  {
    name: "unknown command exce",
    args: ["exce", "--api-url", API, "--", "echo", "hi"],
    reason: /unknown command 'exce'/,
    suggests: "Did you mean exec?",
  },
];

async function runCase(t: TestContext, c: Case): Promise<{ res: SbxResult; home: string; server: MisbehavingServer }> {
  const home = makeHome("sbx-e2e-bad-");
  t.onTestFinished(() => removeHome(home));
  const server = await startMisbehavingServer();
  t.onTestFinished(() => server.close());
  const res = await runMain(
    c.args.map((a) => (a === API ? server.url : a)),
    { home },
  );
  return { res, home, server };
}

describe.concurrent("bad input: exit 125, one line, nothing dispatched", () => {
  it.for(cases)("$name", async (c, t) => {
    const { res, home, server } = await runCase(t, c);
    expect(res.code, res.stderr).toBe(125);
    expect(res.stdout).toBe("");
    const errLines = lines(res.stderr);
    expect(errLines[0], res.stderr).toMatch(c.reason);
    // Beyond the reason, only a hint or a suggestion.
    for (const extra of errLines.slice(1)) expect(extra).toMatch(/^(hint: |\(Did you mean )/);
    if (c.suggests) expect(res.stderr).toContain(c.suggests);
    expect(res.stderr).not.toMatch(/\x1b\[/);

    expect(server.requests).toHaveLength(0);
    const list = await runMainJson<unknown[]>(["receipts", "list", "--json"], { home });
    expect(list.result.code).toBe(0);
    expect(list.doc).toEqual([]);
  });

  it("an unknown option of a subcommand is reported like every other error, prefixed `sbx:`", async (t) => {
    const c = cases.find((x) => x.name === "--frobnicate")!;
    const { res } = await runCase(t, c);
    expect(res.code).toBe(125);
    expect(lines(res.stderr)[0]).toMatch(/^sbx: unknown option '--frobnicate'/);
  });
});
