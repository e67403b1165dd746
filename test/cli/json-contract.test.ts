// The output contract, in-process through main() against the embedded backend on the
// home's socket: every --json prints one JSON document (JSON Lines for export) with
// exactly the declared fields and nothing else on stdout; piped output carries no
// ANSI; NO_COLOR and --no-color win over FORCE_COLOR; --quiet leaves only data.
// (That --quiet also hides the daemon's start-up line is in test/e2e/local-daemon.)

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { lines, makeHome, removeHome, type SbxResult } from "../support/cli.js";
import { type LocalHome, localHome, runMain } from "../support/in-process.js";

// The contracts. Changing a field list here is changing the documented interface.
const RECEIPT_FIELDS = [
  "receipt_id",
  "kind",
  "profile",
  "api_url",
  "sandbox_id",
  "idempotency_key",
  "mcp_tool",
  "mcp_request_id",
  "execution_id",
  "process_id",
  "request_id",
  "boot",
  "request",
  "classification",
  "may_have_run",
  "exit",
  "outcome",
  "exit_code",
  "signal",
  "system_error",
  "end_reason",
  "image_digest",
  "usage",
  "egress_denied",
  "record_pending",
  "http_status",
  "error",
  "retry_after_ms",
  "stdout",
  "stderr",
  "stdout_truncated",
  "stderr_truncated",
  "created_at",
  "dispatched_at",
  "answered_at",
  "next",
];
const REQUEST_FIELDS = ["method", "path", "body", "body_sha256"];
const DETAILED_RECEIPT_FIELDS = [...RECEIPT_FIELDS, "attempts", "observations"];
/** exec --json: the receipt, and whether the backend kept all of the output (README, "Output past the cap"). */
const EXEC_RECEIPT_FIELDS = [...RECEIPT_FIELDS, "output_complete", "output_not_kept_bytes"];
const ATTEMPT_FIELDS = ["attempt", "dispatched_at", "body_sha256"];
const OBSERVATION_FIELDS = [
  "at",
  "source",
  "attempt",
  "classification",
  "http_status",
  "execution_id",
  "process_id",
  "request_id",
  "job_id",
  "boot",
  "outcome",
  "exit_code",
  "signal",
  "system_error",
  "end_reason",
  "image_digest",
  "usage",
  "egress_denied",
  "record_pending",
  "error",
  "retry_after_ms",
];
const SANDBOX_FIELDS = [
  "sandbox_id",
  "name",
  "status",
  "isolation",
  "network",
  "network_mode",
  "egress",
  "workspace",
  "created_at",
  "limits",
  "labels",
  "idle_timeout_ms",
  "image",
  "published",
  "volumes",
];
const PROFILE_FIELDS = ["profile", "api_url", "api_key", "insecure", "current"];
const INIT_FIELDS = [...PROFILE_FIELDS, "backend", "health"];
const DAEMON_STATUS_FIELDS = [
  "running",
  "pid",
  "socket",
  "version",
  "started_at",
  "boot",
  "isolation",
  "limits",
  "storage",
  "start_failure",
];
const SANDBOX_DETAILS_FIELDS = [
  ...SANDBOX_FIELDS,
  "host_workspace",
  "workspace_bytes",
  "driver",
  "limit_status",
  "network_status",
  "environment",
  "idle",
];
const STORAGE_FIELDS = ["executions", "processes", "bytes", "retention", "last_sweep"];
const SETTINGS_FIELDS = ["sandbox", "timeout", "detach_keys", "color"];
const PRUNE_FIELDS = ["deleted", "before", "kept_in_doubt"];

const ANSI = /\x1b\[/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
// Nothing listens on port 1: connection refused, so nothing is sent (not_started).
const DEAD_URL = "http://127.0.0.1:1";

type Json = Record<string, unknown>;

function keysOf(v: unknown): string[] {
  expect(v, "a JSON object").toBeTypeOf("object");
  expect(Array.isArray(v)).toBe(false);
  return Object.keys(v as Json).sort();
}

function expectFields(v: unknown, fields: string[]): void {
  expect(keysOf(v)).toEqual([...fields].sort());
}

/** Stderr is for people: no JSON document there. */
function expectNoJsonOn(stderr: string): void {
  for (const l of lines(stderr)) expect(l, "stderr line").not.toMatch(/^\s*[[{]/);
  expect(stderr).not.toContain('"receipt_id"');
}

/** Stdout is exactly one JSON document; returns it. */
function oneDocument(r: SbxResult): unknown {
  expect(r.stdout.trim(), `stdout of a --json command (stderr: ${r.stderr})`).not.toBe("");
  let doc: unknown;
  expect(() => {
    doc = JSON.parse(r.stdout);
  }, `stdout is one JSON document: ${r.stdout}`).not.toThrow();
  expect(r.stdout.endsWith("\n")).toBe(true);
  expectNoJsonOn(r.stderr);
  return doc;
}

function expectReceipt(doc: unknown, fields = RECEIPT_FIELDS): void {
  expectFields(doc, fields);
  expectFields((doc as Json).request, REQUEST_FIELDS);
}

function expectDetailedReceipt(doc: unknown): void {
  expectReceipt(doc, DETAILED_RECEIPT_FIELDS);
  const d = doc as { attempts: unknown[]; observations: unknown[] };
  expect(d.attempts.length).toBeGreaterThan(0);
  expect(d.observations.length).toBeGreaterThan(0);
  for (const a of d.attempts) expectFields(a, ATTEMPT_FIELDS);
  for (const o of d.observations) expectFields(o, OBSERVATION_FIELDS);
}

describe("--json: one document, the declared fields, nothing else on stdout", () => {
  let local: LocalHome;
  // The home's two receipts, oldest first: what the read commands below show.
  let succeeded: SbxResult;
  let failed: SbxResult;
  let receiptId: string;
  const sbx = (args: string[], env?: Record<string, string | undefined>) =>
    local.sbx(args, env === undefined ? {} : { env });

  beforeAll(async () => {
    local = await localHome("sbx-json-");
    succeeded = await sbx(["exec", "--json", "--", "echo", "hello"]);
    failed = await sbx(["exec", "--json", "--api-url", DEAD_URL, "--", "echo", "never"]);
    receiptId = (JSON.parse(succeeded.stdout) as Json).receipt_id as string;
  });
  afterAll(() => local.close());

  it("exec --json: the receipt document, the command's output inside it", () => {
    const r = succeeded;
    expect(r.code).toBe(0);
    const doc = oneDocument(r) as Json;
    expectReceipt(doc, EXEC_RECEIPT_FIELDS);
    expect(doc).toMatchObject({ classification: "succeeded", exit: 0, stdout: "hello\n", kind: "execute" });
    expect(doc).toMatchObject({ output_complete: true, output_not_kept_bytes: { stdout: 0, stderr: 0 } });
  });

  it("exec --json of a failure: still one document; the explanation stays on stderr", () => {
    const r = failed;
    expect(r.code).toBe(75);
    expectReceipt(oneDocument(r), EXEC_RECEIPT_FIELDS);
    expect(r.stderr).toContain("nothing ran");
  });

  it("receipts list --json: an array of receipt documents", async () => {
    const r = await sbx(["receipts", "list", "--json"]);
    expect(r.code).toBe(0);
    const docs = oneDocument(r) as unknown[];
    expect(Array.isArray(docs)).toBe(true);
    expect(docs).toHaveLength(2);
    for (const d of docs) expectReceipt(d);
  });

  it("receipts show --json: the receipt with attempts and observations", async () => {
    const r = await sbx(["receipts", "show", receiptId, "--json"]);
    expect(r.code).toBe(0);
    expectDetailedReceipt(oneDocument(r));
  });

  it("receipts wait --json: the receipt document", async () => {
    const r = await sbx(["receipts", "wait", receiptId, "--json"]);
    expect(r.code).toBe(0);
    expectReceipt(oneDocument(r));
  });

  it("receipts export: JSON Lines, one detailed receipt per line, oldest first", async () => {
    const r = await sbx(["receipts", "export"]);
    expect(r.code).toBe(0);
    expectNoJsonOn(r.stderr);
    const rows = r.stdout.split("\n");
    expect(rows.pop()).toBe("");
    expect(rows).toHaveLength(2);
    const docs = rows.map((l) => JSON.parse(l) as Json);
    for (const d of docs) expectDetailedReceipt(d);
    expect(docs[0]!.receipt_id).toBe(receiptId);
  });

  it("sandbox create/show/list --json: the sandbox document", async () => {
    const created = await sbx(["sandbox", "create", "contract", "--json"]);
    expect(created.code).toBe(0);
    expectFields(oneDocument(created), SANDBOX_FIELDS);

    const shown = await sbx(["sandbox", "show", "contract", "--json"]);
    expect(shown.code).toBe(0);
    expectFields(oneDocument(shown), SANDBOX_DETAILS_FIELDS);

    const listed = await sbx(["sandbox", "list", "--json"]);
    expect(listed.code).toBe(0);
    const doc = oneDocument(listed) as { sandboxes: unknown[] };
    expectFields(doc, ["sandboxes"]);
    expect(doc.sandboxes.length).toBeGreaterThanOrEqual(2);
    for (const s of doc.sandboxes) expectFields(s, SANDBOX_FIELDS);
  });

  it("profile list/show --json: profile summaries, never a key", async () => {
    const added = await local.sbx(["profile", "add", "prod", "--api-url", DEAD_URL, "--api-key-stdin", "--json"], {
      input: "sk-contract-secret",
    });
    expect(added.code).toBe(0);
    expectFields(oneDocument(added), PROFILE_FIELDS);

    const listed = await sbx(["profile", "list", "--json"]);
    const doc = oneDocument(listed) as { profiles: unknown[] };
    expectFields(doc, ["profiles"]);
    expect(doc.profiles).toHaveLength(2);
    for (const p of doc.profiles) expectFields(p, PROFILE_FIELDS);

    const shown = await sbx(["profile", "show", "prod", "--json"]);
    expect(oneDocument(shown)).toEqual({
      profile: "prod",
      api_url: DEAD_URL,
      api_key: true,
      insecure: false,
      current: false,
    });
    for (const r of [added, listed, shown]) expect(r.stdout + r.stderr).not.toContain("sk-contract-secret");
  });

  it("config get --json: every known setting, null when unset; or the one asked for", async () => {
    expect((await sbx(["config", "set", "timeout", "5m"])).code).toBe(0);
    const all = await sbx(["config", "get", "--json"]);
    expect(all.code).toBe(0);
    const doc = oneDocument(all);
    expectFields(doc, SETTINGS_FIELDS);
    expect(doc).toEqual({ sandbox: null, timeout: "5m", detach_keys: null, color: null });

    const one = await sbx(["config", "get", "sandbox", "--json"]);
    expect(one.code).toBe(0);
    expect(oneDocument(one)).toEqual({ sandbox: null });
  });

  it("daemon status --json", async () => {
    const r = await sbx(["daemon", "status", "--json"]);
    expect(r.code).toBe(0);
    const doc = oneDocument(r);
    expectFields(doc, DAEMON_STATUS_FIELDS);
    expect(doc).toMatchObject({ running: true });
    expectFields((doc as Json).storage, STORAGE_FIELDS);
  });

  it("init --yes --json: the profile in effect and what was checked", async () => {
    const r = await sbx(["init", "--yes", "--json"]);
    expect(r.code).toBe(0);
    const doc = oneDocument(r);
    expectFields(doc, INIT_FIELDS);
    expect(doc).toMatchObject({ profile: "local", current: true, backend: "embedded", health: "starts_on_demand" });
  });

  it("receipts prune --json", async () => {
    const r = await sbx(["receipts", "prune", "--before", "2000-01-01T00:00:00Z", "--json"]);
    expect(r.code).toBe(0);
    expectFields(oneDocument(r), PRUNE_FIELDS);
  });

  it("the global --json works before the command too", async () => {
    const r = await sbx(["--json", "profile", "show", "local"]);
    expectFields(oneDocument(r), PROFILE_FIELDS);
  });
});

describe("piped output: no ANSI, tab-separated rows, ISO-8601 times", () => {
  let local: LocalHome;
  // Commands sent nowhere run in a home of their own, so the receipts listed here stay two.
  let elsewhere: string;
  // No NO_COLOR, no FORCE_COLOR: what a script in a pipeline gets by default.
  const plain = { NO_COLOR: undefined, FORCE_COLOR: undefined };
  const sbx = (args: string[], env: Record<string, string | undefined> = plain) =>
    args.includes(DEAD_URL) ? runMain(args, { home: elsewhere, env }) : local.sbx(args, { env });

  beforeAll(async () => {
    local = await localHome("sbx-pipe-");
    elsewhere = makeHome("sbx-pipe-dead-");
    expect((await sbx(["exec", "--", "true"])).code).toBe(0);
    expect((await sbx(["exec", "--", "sh", "-c", "exit 3"])).code).toBe(3);
  });
  afterAll(async () => {
    await local.close();
    removeHome(elsewhere);
  });

  const noAnsi = (r: SbxResult) => {
    expect(r.stdout, "stdout").not.toMatch(ANSI);
    expect(r.stderr, "stderr").not.toMatch(ANSI);
  };

  it("receipts list: a header and tab-separated rows with ISO-8601 times", async () => {
    const r = await sbx(["receipts", "list"]);
    expect(r.code).toBe(0);
    noAnsi(r);
    const [head, ...rows] = lines(r.stdout);
    expect(head).toBe("RECEIPT\tCLASSIFICATION\tEXIT\tSANDBOX\tCOMMAND\tCREATED");
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const cells = row.split("\t");
      expect(cells).toHaveLength(6);
      expect(cells[5]).toMatch(ISO);
    }
    expect(rows[0]!.split("\t").slice(1, 3)).toEqual(["failed", "3"]);
  });

  it("sandbox list, profile list and help: no ANSI", async () => {
    for (const args of [
      ["sandbox", "list"],
      ["profile", "list"],
      ["help"],
      ["exec", "--help"],
      ["help", "exit-codes"],
    ]) {
      const r = await sbx(args);
      expect(r.code, args.join(" ")).toBe(0);
      noAnsi(r);
    }
    const sandboxes = await sbx(["sandbox", "list"]);
    expect(lines(sandboxes.stdout)[0]).toBe("SANDBOX\tNAME\tSTATUS\tISOLATION\tNETWORK\tPORTS\tCREATED");
    expect(lines(sandboxes.stdout)[1]!.split("\t")[6]).toMatch(ISO);
  });

  it("an exec failure's line on stderr: no ANSI", async () => {
    const r = await sbx(["exec", "--api-url", DEAD_URL, "--", "echo", "x"]);
    expect(r.code).toBe(75);
    expect(r.stderr).toContain("Safe to send again");
    noAnsi(r);
  });

  it("FORCE_COLOR colours even a pipe (so the checks above can see ANSI when it is there)", async () => {
    const list = await sbx(["receipts", "list"], { NO_COLOR: undefined, FORCE_COLOR: "1" });
    expect(list.stdout).toMatch(ANSI);
    const failure = await sbx(["exec", "--api-url", DEAD_URL, "--", "echo", "x"], {
      NO_COLOR: undefined,
      FORCE_COLOR: "1",
    });
    expect(failure.stderr).toMatch(ANSI);
  });

  it("NO_COLOR and --no-color win over FORCE_COLOR", async () => {
    const cases: Array<[string[], Record<string, string | undefined>]> = [
      [["receipts", "list"], { NO_COLOR: "1", FORCE_COLOR: "1" }],
      [["--no-color", "receipts", "list"], { NO_COLOR: undefined, FORCE_COLOR: "1" }],
      [["receipts", "list", "--no-color"], { NO_COLOR: undefined, FORCE_COLOR: "1" }],
      [["exec", "--api-url", DEAD_URL, "--", "echo", "x"], { NO_COLOR: "1", FORCE_COLOR: "1" }],
      [["--no-color", "exec", "--api-url", DEAD_URL, "--", "echo", "x"], { NO_COLOR: undefined, FORCE_COLOR: "1" }],
    ];
    for (const [args, env] of cases) {
      const r = await sbx(args, env);
      expect(r.stdout + r.stderr, args.join(" ")).not.toBe("");
      noAnsi(r);
    }
  });

  it("the `color` setting `always` colours a pipe, but NO_COLOR and --no-color still win", async () => {
    expect((await sbx(["config", "set", "color", "always"])).code).toBe(0);
    try {
      expect((await sbx(["receipts", "list"])).stdout).toMatch(ANSI);
      noAnsi(await sbx(["receipts", "list"], { NO_COLOR: "1" }));
      noAnsi(await sbx(["receipts", "list", "--no-color"]));
    } finally {
      await sbx(["config", "set", "color", "auto"]);
    }
  });
});

describe("--quiet leaves only data", () => {
  let local: LocalHome;
  const sbx = (args: string[]) => local.sbx(args);

  beforeEach(async () => {
    local = await localHome("sbx-quiet-");
  });
  afterEach(() => local.close());

  it("exec: the command's output and nothing else", async () => {
    const r = await sbx(["--quiet", "exec", "--", "echo", "hi"]);
    expect(r).toMatchObject({ code: 0, stdout: "hi\n", stderr: "" });
  });

  it("data commands still print their data", async () => {
    expect((await sbx(["exec", "--", "true"])).code).toBe(0);
    const list = await sbx(["-q", "receipts", "list"]);
    expect(list.stderr).toBe("");
    // Only the rows: --quiet leaves the header out.
    expect(lines(list.stdout)).toHaveLength(1);
    expect(list.stdout).not.toContain("RECEIPT");
    const status = await sbx(["-q", "daemon", "status"]);
    expect(status.stdout).toMatch(/^running\t/);
    expect(status.stderr).toBe("");
  });

  it("commands that only report progress print nothing", async () => {
    for (const args of [
      ["--quiet", "init", "--yes"],
      ["--quiet", "profile", "use", "local"],
      ["--quiet", "sandbox", "create", "q"],
      ["--quiet", "sandbox", "rm", "q"],
      ["--quiet", "receipts", "prune", "--before", "2000-01-01T00:00:00Z"],
    ]) {
      const r = await sbx(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stderr, args.join(" ")).toBe("");
    }
    // Without --quiet the same commands do talk (on stderr).
    expect((await sbx(["init", "--yes"])).stderr).toContain("embedded backend");
  });

  it("an in-doubt or not-started line is never silenced", async () => {
    const r = await sbx(["--quiet", "exec", "--api-url", DEAD_URL, "--", "echo", "x"]);
    expect(r.code).toBe(75);
    expect(r.stderr).toContain("sbx receipts resubmit");
  });

  it("--verbose names the receipt, the key and the request before sending, never the key's secret", async () => {
    const r = await local.sbx(["--verbose", "exec", "--idempotency-key", "k-verbose-1", "--", "true"], {
      env: { SBX_API_KEY: "sk-verbose-secret" },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/receipt rcp_\w+ committed; idempotency key k-verbose-1/);
    expect(r.stderr).toContain("POST /api/v1/sandbox/default/execute");
    expect(r.stderr).not.toContain("sk-verbose-secret");
    expect((await sbx(["exec", "--", "true"])).stderr).toBe("");
  });
});
