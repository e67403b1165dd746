// `sbx __complete KIND -- WORDS`, what the generated completions ask for sandbox names,
// process names and job ids (test/docs/generated.test.ts runs the scripts themselves):
// read from the backend, the sandbox taken from the words typed so far; and silent,
// exit 0, without starting a daemon, when there is no backend to ask.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shortId } from "../../src/common/ids.js";
import { makeHome, removeHome } from "../support/cli.js";
import { type LocalHome, localHome, runMain } from "../support/in-process.js";

let local: LocalHome;
let unnamed: string;

beforeAll(async () => {
  local = await localHome("sbx-complete-");
  const ok = async (args: string[], input?: string) => {
    const r = await local.sbx(args, input === undefined ? {} : { input });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  };
  await ok(["sandbox", "create", "web"]);
  await ok(["process", "start", "-s", "web", "--name", "server", "--", "sleep", "30"]);
  await ok(["process", "start", "--name", "worker", "--", "sleep", "30"]);
  unnamed = await ok(["process", "start", "--", "sleep", "30"]);
  const jobs = [{ job_id: "deploy-1", name: "d", command: "true" }];
  await ok(["jobs", "submit", "-", "--wait"], JSON.stringify({ request_id: "complete-r", jobs }));
});
afterAll(async () => {
  for (const [s, p] of [
    ["web", "server"],
    ["default", "worker"],
    ["default", unnamed],
  ])
    await local.sbx(["process", "stop", "-s", s!, p!]);
  await local.close();
});

const words = async (...args: string[]) => {
  const r = await local.sbx(["__complete", ...args]);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe("");
  return r.stdout.split("\n").filter((l) => l !== "");
};

describe("sbx __complete", () => {
  it("sandbox names", async () => {
    expect((await words("sandbox-name")).sort()).toEqual(["default", "web"]);
  });

  it("process names of the sandbox the words name (-s, --sandbox, --sandbox=), a nameless one by its short id", async () => {
    expect((await words("process-name")).sort()).toEqual([shortId(unnamed), "worker"].sort());
    expect(await words("process-name", "--", "process", "logs", "-s", "web")).toEqual(["server"]);
    expect(await words("process-name", "--", "process", "logs", "--sandbox", "web")).toEqual(["server"]);
    expect(await words("process-name", "--", "process", "logs", "--sandbox=web")).toEqual(["server"]);
  });

  it("job ids", async () => {
    expect(await words("job-id", "--", "jobs", "show")).toEqual(["deploy-1"]);
    expect(await words("job-id", "--", "jobs", "show", "-s", "web")).toEqual([]);
  });

  it("is silent (exit 0) where there is no backend to ask, and starts no daemon", async () => {
    const home = makeHome("sbx-complete-none-");
    try {
      const r = await runMain(["__complete", "sandbox-name"], { home });
      expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
      expect(fs.existsSync(path.join(home, "daemon", "daemon.sock"))).toBe(false);
      const bad = await runMain(["__complete", "nonsense"], { home });
      expect(bad.code).toBe(125);
    } finally {
      removeHome(home);
    }
  });
});
