import { afterAll, describe, expect, it } from "vitest";
import { BwrapDriver } from "../../src/backend/drivers/bwrap/driver.js";
import { daemonHost, type SandboxDriver } from "../../src/backend/drivers/driver.js";
import { NoneDriver } from "../../src/backend/drivers/none.js";
import {
  ExecutionRunner,
  type ExecutionRunnerOptions,
  OutputTail,
  type RunSpec,
} from "../../src/backend/executions/runner.js";
import { groupMembers, ISOLATIONS, tempDir, testPlacement, unavailable, until } from "./support.js";

describe("OutputTail", () => {
  it("keeps everything under the limit", () => {
    const tail = new OutputTail(10);
    tail.push(Buffer.from("abc"));
    tail.push(Buffer.from("def"));
    expect(tail.summary()).toEqual({ text: "abcdef", bytes: 6, truncated: false });
  });

  it("keeps the last bytes and counts all of them", () => {
    const tail = new OutputTail(5);
    for (const part of ["0123", "4567", "89"]) tail.push(Buffer.from(part));
    expect(tail.summary()).toEqual({ text: "56789", bytes: 10, truncated: true });
  });

  it("does not start the kept text inside a UTF-8 character", () => {
    const tail = new OutputTail(4);
    tail.push(Buffer.from("xé€")); // 1 + 2 + 3 bytes; the last 4 start inside é
    expect(tail.summary()).toEqual({ text: "€", bytes: 6, truncated: true });
  });

  it("replaces invalid bytes", () => {
    const tail = new OutputTail(10);
    tail.push(Buffer.from([0x61, 0xff, 0x62]));
    expect(tail.summary().text).toBe("a\ufffdb");
  });
});

const DRIVERS: Record<(typeof ISOLATIONS)[number], () => SandboxDriver> = {
  none: () => new NoneDriver(daemonHost()),
  bwrap: () => new BwrapDriver({ host: daemonHost() }),
};

describe.each(ISOLATIONS)("ExecutionRunner on %s", (isolation) => {
  const skip = unavailable(isolation);
  if (skip !== null) {
    it.skip(skip, () => {});
    return;
  }
  const workspaceDir = tempDir("sbx-runner-");
  const driver = DRIVERS[isolation]();
  // A bwrap driver keeps each sandbox's environment (and its io socket's directory) until it is shut down.
  afterAll(async () => {
    await driver.shutdown?.();
  });
  const spec = {
    executionId: "exe_t",
    driver,
    placement: testPlacement(workspaceDir),
    cwd: workspaceDir,
    env: { PATH: "/usr/bin:/bin" },
    stdin: null,
    timeoutMs: 5000,
  };
  class LocalProcessDriver {
    constructor(private readonly opts: ExecutionRunnerOptions = {}) {}
    start(run: Omit<RunSpec, "driver" | "placement"> & Partial<RunSpec>) {
      return new ExecutionRunner(this.opts).start({ ...spec, ...run });
    }
  }

  it("answers a missing program like a shell (127), without throwing", async () => {
    const run = new LocalProcessDriver().start({ ...spec, argv: ["/nonexistent/program"] });
    const result = await run.done;
    expect(result).toMatchObject({ outcome: "failed", exitCode: 127, signal: null });
    expect(result.stderr.text).toBe("sbx: /nonexistent/program: command not found\n");
    expect(run.pgid).toBeNull();
  });

  it("cancels a process group with TERM", async () => {
    const run = new LocalProcessDriver().start({ ...spec, argv: ["sleep", "30"] });
    expect(run.pgid).toBeGreaterThan(0);
    run.cancel();
    expect(await run.done).toMatchObject({ outcome: "cancelled", exitCode: null, signal: "SIGTERM" });
  });

  it("ends a process that ignores TERM with KILL after the grace", async () => {
    const run = new LocalProcessDriver({ killGraceMs: 200 }).start({
      ...spec,
      argv: ["sh", "-c", "trap '' TERM; sleep 30"],
    });
    // The trap is set once sh has started sleep.
    await until(() => groupMembers(run.pgid!).includes("sleep"), 5000, "sleep to start");
    run.cancel();
    expect(await run.done).toMatchObject({ outcome: "cancelled", signal: "SIGKILL" });
  });

  it("reports unknown, never a terminal outcome without exit information, when the leader's end is not known", async () => {
    const run = new LocalProcessDriver({ killGraceMs: 100 }).start({ ...spec, argv: ["sleep", "30"] });
    // Lose the leader's exit status, as if it was never reported: only the give-up fallback ends the run.
    const child = (run as unknown as { group: { child: import("node:child_process").ChildProcess } }).group.child;
    child.removeAllListeners("exit");
    child.removeAllListeners("close");
    run.cancel();
    const result = await run.done;
    expect(result).toMatchObject({
      outcome: "unknown",
      exitCode: null,
      signal: null,
      systemError: "exit_status_unknown",
    });
  });

  it("ends a run when its leader exits although a background job holds the pipes", async () => {
    const run = new LocalProcessDriver().start({ ...spec, argv: ["sh", "-c", "sleep 3600 & echo started"] });
    const result = await run.done;
    // Succeeded, not timed_out (spec.timeoutMs): it ended at the leader's exit, not when the pipes closed.
    expect(result).toMatchObject({ outcome: "succeeded", exitCode: 0, signal: null, systemError: null });
    expect(result.stdout.text).toBe("started\n");
    await until(() => groupMembers(run.pgid!).length === 0, 3000, "the background job to end");
  });
});
