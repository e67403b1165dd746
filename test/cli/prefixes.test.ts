// Every noun that takes an id takes a unique prefix of it (its short form, or fewer
// characters): receipts, executions (also ones no receipt here knows), processes, jobs
// and sandboxes by id. An ambiguous prefix is refused (125) naming a few of what it
// matches; one that matches nothing is refused too. In-process against the embedded
// backend.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shortId } from "../../src/common/ids.js";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { makeHome, removeHome } from "../support/cli.js";
import { type LocalHome, localHome, runMain } from "../support/in-process.js";

let local: LocalHome;
const sbx = (args: string[], input?: string) => local.sbx(args, input === undefined ? {} : { input });

beforeAll(async () => {
  local = await localHome("sbx-prefixes-");
});
afterAll(() => local.close());

async function ok(args: string[], input?: string) {
  const r = await sbx(args, input);
  expect(r.code, `sbx ${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r;
}

describe("ids by a unique prefix", () => {
  it("a receipt and its execution, by their short forms", async () => {
    const { doc } = await local.json<ReceiptDocument>(["exec", "--json", "--", "echo", "short"]);
    const rcp = shortId(doc.receipt_id);
    const exe = shortId(doc.execution_id!);
    expect(rcp).toHaveLength(12);
    expect(exe).toHaveLength(12);
    expect((await ok(["receipts", "show", rcp, "--json"])).stdout).toContain(doc.receipt_id);
    expect((await ok(["logs", exe])).stdout).toBe("short\n");
  });

  it("an execution no receipt here knows: the backend's, by prefix", async () => {
    // Started from another home: this home's store has no receipt of it.
    const other = makeHome("sbx-prefixes-other-");
    try {
      const started = await runMain(
        ["exec", "--json", "--api-url", `unix:${local.backend.socketPath}`, "--", "echo", "elsewhere"],
        {
          home: other,
        },
      );
      expect(started.code, started.stderr).toBe(0);
      const id = (JSON.parse(started.stdout) as ReceiptDocument).execution_id!;
      expect((await ok(["logs", shortId(id)])).stdout).toBe("elsewhere\n");
      expect((await ok(["logs", id.slice(0, 9)])).stdout).toBe("elsewhere\n");
      const none = await sbx(["logs", "exe_zzzzzzzz"]);
      expect(none.code).toBe(125);
      expect(none.stderr).toContain('no receipt and no execution in sandbox default matches "exe_zzzzzzzz"');
    } finally {
      removeHome(other);
    }
  });

  it("a process, by its short form; prc_ alone matches them all and is refused, naming some", async () => {
    const a = (await ok(["process", "start", "--", "sleep", "30"])).stdout.trim();
    const b = (await ok(["process", "start", "--", "sleep", "30"])).stdout.trim();
    try {
      const shown = await ok(["process", "show", shortId(a), "--json"]);
      expect(JSON.parse(shown.stdout).process_id).toBe(a);
      // With -s the sandbox's processes are searched (not the receipts).
      const withS = await ok(["process", "show", shortId(b), "-s", "default", "--json"]);
      expect(JSON.parse(withS.stdout).process_id).toBe(b);
      const all = await sbx(["process", "show", "prc_", "-s", "default"]);
      expect(all.code).toBe(125);
      expect(all.stderr).toMatch(/^sbx: "prc_" matches \d+ (receipts|processes): /);
      expect(all.stderr).toContain("hint: give more characters of the id");
    } finally {
      await sbx(["process", "stop", a]);
      await sbx(["process", "stop", b]);
    }
  });

  it("a job, by a prefix of its id; an ambiguous one names the jobs", async () => {
    const jobs = [
      { job_id: "deploy-one", name: "one", command: "echo one" },
      { job_id: "deploy-two", name: "two", command: "echo two" },
    ];
    await ok(["jobs", "submit", "-", "--wait"], JSON.stringify({ request_id: "prefix-jobs", jobs }));
    expect((await ok(["jobs", "logs", "deploy-o"])).stdout).toBe("one\n");
    expect((await ok(["jobs", "show", "deploy-t"])).stdout).toContain("job\tdeploy-two");
    const both = await sbx(["jobs", "show", "deploy"]);
    expect(both.code).toBe(125);
    expect(both.stderr).toBe(
      'sbx: "deploy" matches 2 jobs: deploy-one, deploy-two\nhint: give more characters of the id\n',
    );
    expect((await ok(["jobs", "wait", "deploy-o", "deploy-t"])).code).toBe(0);
    // A job id the backend derived (job_ and hex): a prefix of it works too.
    const derived = await local.json<{ jobs: Array<{ job_id: string }> }>(["jobs", "run", "--json", "--", "echo", "d"]);
    const id = derived.doc.jobs[0]!.job_id;
    expect((await ok(["jobs", "show", id.slice(0, 12)])).stdout).toContain(`job\t${id}`);
  });

  it("a sandbox by a prefix of its id, in sandbox show/rm, -s and cp; a receipt records the whole id", async () => {
    await ok(["sandbox", "create", "pfx"]);
    const { doc: made } = await local.json<{ sandbox_id: string }>(["sandbox", "show", "pfx", "--json"]);
    const short = shortId(made.sandbox_id);
    expect(short).toMatch(/^sbx_\w{8}$/);
    const { doc: shown } = await local.json<{ name: string }>(["sandbox", "show", short, "--json"]);
    expect(shown.name).toBe("pfx");
    const { doc: ran } = await local.json<ReceiptDocument>(["exec", "-s", short, "--json", "--", "touch", "f"]);
    expect(ran.sandbox_id).toBe(made.sandbox_id);
    const copied = await sbx(["cp", `${short}:f`, "-"]);
    expect(copied.code, copied.stderr).toBe(0);
    const every = await sbx(["sandbox", "show", "sbx_"]);
    expect(every.code).toBe(125);
    expect(every.stderr).toMatch(/^sbx: "sbx_" matches \d+ sandboxes: sbx_/);
    const none = await sbx(["sandbox", "show", "sbx_zzzzzzzz"]);
    expect([none.code, none.stderr.split("\n")[0]]).toEqual([125, 'sbx: no sandbox "sbx_zzzzzzzz"']);
    await ok(["sandbox", "rm", short, "--force"]);
    expect((await sbx(["sandbox", "show", "pfx"])).code).toBe(125);
  });
});
