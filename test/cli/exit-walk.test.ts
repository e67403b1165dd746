// Exit codes never borrow a command's: every verb of the command tree, run in-process
// against a real embedded backend with a bad id, with each flag given a bad value, and
// against a profile whose backend cannot be reached, exits with one of sbx's own codes
// as `sbx help exit-codes` lists them — never 1-123, which only a command that ran
// gives (docs/classification.md, "Every other command").

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { completeTree, type Runtime } from "../../src/cli/command.js";
import { allCommands, type CommandDoc, describeProgram, type OptionDoc } from "../../src/cli/docs/tree.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { buildProgram } from "../../src/cli/program.js";
import { type LocalHome, localHome } from "../support/in-process.js";

/** The verbs, with every argument and option, as the generated docs read them. */
function verbs(): CommandDoc[] {
  const rt: Runtime = {
    io: createBufferIO(),
    env: {},
    interrupt: new AbortController().signal,
    onFirstInterrupt: () => () => undefined,
    exitCode: 0,
    exitsAfter: false,
  };
  const root = describeProgram(completeTree(buildProgram(rt)));
  return allCommands(root).filter((c) => c.subcommands.length === 0);
}

/**
 * `daemon stop` would end the backend this walk runs against, and `daemon run`/`start`
 * would start one in this process: they are walked with bad flag values only (refused
 * before anything starts). test/e2e/local-daemon.test.ts runs them for real.
 */
const LOCAL_DAEMON_ONLY = new Set(["daemon run", "daemon start", "daemon stop"]);

/** What each argument is given when it is an id or a name that names nothing. */
const BAD_ARGUMENT: Record<string, string[]> = {
  id: ["rcp_zzzz"],
  execution: ["rcp_zzzz"],
  process: ["prc_zzzz"],
  job: ["job_51dd"],
  jobs: ["job_51dd"],
  file: ["nosuch.json"],
  source: ["nosuch:f.txt"],
  destination: ["."],
  shell: ["tcsh"],
  words: ["nosuch"],
  name: ["nosuch"],
  key: ["nosuch"],
  value: ["x"],
  signal: ["SIGNOPE"],
  // An image layout that is not there (a registry name would be looked up on the network).
  ref: ["oci:/nonexistent/sbx-walk"],
  // A command in a sandbox that does not exist.
  argv: ["--", "true"],
};

/** Arguments of a verb whose meaning differs from the table above. */
const BAD_ARGUMENTS_OF: Record<string, string[]> = {
  "sandbox show": ["sbx_zzzz"],
  "sandbox rm": ["sbx_zzzz"],
  "sandbox stats": ["sbx_zzzz"],
  "sandbox egress": ["sbx_zzzz"],
  "sandbox create": ["../bad"],
  "port-forward": ["sbx_zzzz", "8000"],
  port: ["sbx_zzzz"],
};

/** Bad values by what an option takes (its value name); free text (a reason, a name) has none. */
const BAD_VALUE: Record<string, string> = {
  dur: "1x",
  n: "x",
  time: "someday",
  id: "../x",
  file: "/nonexistent/sbx-walk",
  "K=V": "NOEQUALS",
  key: "a b",
  "event-id": "x",
  url: "ftp://example.com",
  size: "1 parsec",
  "host:port": "nohost",
  spec: "nonsense",
  dir: "../..",
  addr: "example.com",
};

function argumentsOf(verb: CommandDoc): string[] {
  const key = verb.path.join(" ");
  if (BAD_ARGUMENTS_OF[key]) return BAD_ARGUMENTS_OF[key]!;
  const args: string[] = [];
  // A command in a sandbox (exec, process start, jobs run) names one that does not exist.
  if (verb.arguments.some((a) => a.name === "argv")) args.push("-s", "nosuch-sandbox");
  for (const a of verb.arguments) {
    const bad = BAD_ARGUMENT[a.name];
    if (bad === undefined) throw new Error(`${key}: no bad value for the argument <${a.name}>; add one to the walk`);
    if (a.name === "argv") continue;
    args.push(...bad);
  }
  if (verb.arguments.some((a) => a.name === "argv")) args.push(...BAD_ARGUMENT.argv!);
  return args;
}

/** Each option that takes a value with a bad one, before the verb's own arguments. */
function badFlagRuns(verb: CommandDoc): Array<{ option: OptionDoc; argv: string[] }> {
  return verb.options
    .filter((o) => o.takesValue !== "none" && o.long !== undefined)
    .flatMap((o) => {
      const value = o.choices?.length ? "nosuch" : BAD_VALUE[o.valueName ?? ""];
      if (value === undefined) return [];
      return [{ option: o, argv: [...verb.path, `${o.long}=${value}`, ...argumentsOf(verb)] }];
    });
}

/** The codes `sbx help exit-codes` lists as plain numbers (not 1-123, not 128+S). */
async function documentedCodes(home: LocalHome): Promise<Set<number>> {
  const help = await home.sbx(["help", "exit-codes"]);
  expect(help.code).toBe(0);
  const codes = [...help.stdout.matchAll(/^ {2}(\S+) /gm)].map((m) => m[1]!);
  expect(codes).toContain("1-123");
  return new Set(codes.filter((c) => /^\d+$/.test(c)).map(Number));
}

let home: LocalHome;
let allowed: Set<number>;
const ALL = verbs();

beforeAll(async () => {
  home = await localHome("sbx-exit-walk-");
  // A backend nobody can reach: its socket does not exist.
  const gone = await home.sbx(["profile", "add", "gone", "--api-url", `unix:${path.join(home.home, "nowhere.sock")}`]);
  expect(gone.code, gone.stderr).toBe(0);
  allowed = await documentedCodes(home);
  // A bug (70) is never an acceptable answer to bad input.
  allowed.delete(70);
  fs.mkdirSync(path.join(home.home, "walk"), { recursive: true });
});
afterAll(() => home.close());

interface Walked {
  argv: string[];
  code: number | null;
  stderr: string;
}

/** Runs each argv, a few at a time (each run is a whole sbx in this process). */
async function walk(argvs: string[][]): Promise<Walked[]> {
  const walked: Walked[] = [];
  let next = 0;
  const worker = async () => {
    while (next < argvs.length) {
      const argv = argvs[next++]!;
      const r = await home.sbx(argv, { input: "" });
      walked.push({ argv, code: r.code, stderr: r.stderr });
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return walked;
}

function expectOwnCode(w: Walked): void {
  const said = `sbx ${w.argv.join(" ")} exited ${w.code}\n${w.stderr}`;
  expect(w.code !== null && allowed.has(w.code), said).toBe(true);
  // sbx's own failure always says why.
  if (w.code !== 0) expect(w.stderr.trim(), said).not.toBe("");
}

describe("every verb exits with sbx's own codes, never a command's 1-123", () => {
  it("knows every verb of the tree (the walk covers what the tree has)", () => {
    expect(ALL.length).toBeGreaterThan(40);
    for (const verb of ALL) if (!LOCAL_DAEMON_ONLY.has(verb.path.join(" "))) argumentsOf(verb);
  });

  it("with a bad id or name", async () => {
    const walked = await walk(
      ALL.filter((v) => !LOCAL_DAEMON_ONLY.has(v.path.join(" "))).map((v) => [...v.path, ...argumentsOf(v)]),
    );
    for (const w of walked) expectOwnCode(w);
    // The ones the issue names, as a new user met them.
    const code = (argv: string) => walked.find((w) => w.argv.join(" ") === argv)?.code;
    expect(code("receipts wait rcp_zzzz")).toBe(125);
    expect(code("receipts resubmit rcp_zzzz")).toBe(125);
    expect(code("jobs show job_51dd")).toBe(125);
  });

  it("with each flag given a bad value", async () => {
    const runs = ALL.flatMap(badFlagRuns);
    expect(runs.length).toBeGreaterThan(40);
    const walked = await walk(runs.map((r) => r.argv));
    for (const w of walked) expectOwnCode(w);
  });

  it("against a profile whose backend cannot be reached", async () => {
    const walked = await walk(
      ALL.filter((v) => !LOCAL_DAEMON_ONLY.has(v.path.join(" "))).map((v) => [
        "--profile",
        "gone",
        ...v.path,
        ...argumentsOf(v),
      ]),
    );
    for (const w of walked) expectOwnCode(w);
    const run = (argv: string) => walked.find((w) => w.argv.join(" ") === `--profile gone ${argv}`)!;
    expect(run("sandbox list").code).toBe(75);
    expect(run("exec -s nosuch-sandbox -- true").code).toBe(75);
    // A backend this command never reached is not waited for (only one that went away is).
    expect(run("jobs wait job_51dd").code).toBe(75);
    expect(run("jobs wait job_51dd").stderr).not.toContain("reading again");
  });

  it("cp out through a symlink that leads out of /workspace is refused, in both directions", async () => {
    const link = await home.sbx(["exec", "--", "ln", "-s", "/etc", "walk-escape"]);
    expect(link.code, link.stderr).toBe(0);
    const out = path.join(home.home, "walk");
    const walked = await walk([
      ["cp", "default:walk-escape/hostname", out],
      ["cp", path.join(home.home, "config.json"), "default:walk-escape/sbx-walk"],
    ]);
    for (const w of walked) {
      expectOwnCode(w);
      expect(w.code, w.stderr).toBe(125);
    }
    expect(fs.existsSync("/etc/sbx-walk")).toBe(false);
  });

  it("an ambiguous prefix is refused (125), naming a few of what it matches", async () => {
    for (let i = 0; i < 3; i++) {
      const r = await home.sbx(["exec", "--idempotency-key", `walk-same-${i}`, "--", "true"]);
      expect(r.code, r.stderr).toBe(0);
    }
    const r = await home.sbx(["receipts", "show", "walk-same"]);
    expect(r.code).toBe(125);
    expect(r.stderr).toMatch(/^sbx: "walk-same" matches 3 receipts: rcp_\w+, rcp_\w+, rcp_\w+\n/);
  });
});
