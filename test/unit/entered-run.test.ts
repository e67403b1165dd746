// A command entered into a live sandbox (src/backend/drivers/bwrap/entered-run.ts), its
// events fed by hand: an `exit` while the command's own process still runs is not
// believed (the init reaps a command before it says it exited), and its exit is told
// once its output connections are there.

import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { EnteredRun, type EnvironmentPort } from "../../src/backend/drivers/bwrap/entered-run.js";
import type { ProcEntry } from "../../src/backend/drivers/proc.js";

function port(over: Partial<EnvironmentPort> = {}): EnvironmentPort & { requests: unknown[] } {
  const requests: unknown[] = [];
  return {
    requests,
    leaderPid: -1,
    io: { expect: () => "t".repeat(32), forget: () => {} } as unknown as EnvironmentPort["io"],
    request: (r) => requests.push(r),
    withdraw: () => false,
    hostPidOf: () => null,
    watchMemory: () => ({ oomKilled: () => false }),
    session: () => [],
    forget: () => {},
    ...over,
  };
}

const command = { id: "r1", argv: ["sleep", "1"], env: {}, cwd: "/workspace", stdin: false };

describe("EnteredRun", () => {
  it("does not take an exit while the command's leader is a live process of the sandbox", () => {
    // The leader, seen from the host: innermostPid is read from /proc, so our own process stands in.
    const alive: ProcEntry = {
      pid: process.pid,
      ppid: 1,
      pgid: process.pid,
      sid: process.pid,
      state: "S",
      name: "x",
      exiting: false,
    } as ProcEntry;
    let leader: ProcEntry[] = [alive];
    const run = new EnteredRun(port({ session: () => leader }), command);
    run.proceed();
    const ownPid = Number(
      fs
        .readFileSync("/proc/self/status", "utf8")
        .match(/^NSpid:\s+(.*)$/m)![1]!
        .trim()
        .split(/\s+/)
        .pop(),
    );
    run.onEvent({ ev: "started", id: "r1", pid: ownPid });
    let exited = false;
    run.on("exit", () => {
      exited = true;
    });
    run.onEvent({ ev: "exit", id: "r1", code: 0, signal: null });
    expect(exited).toBe(false);
    // Reaped: now the exit is the command's.
    leader = [];
    run.stdout.end();
    run.stderr.end();
    run.onEvent({ ev: "exit", id: "r1", code: 0, signal: null });
    expect(exited).toBe(true);
  });
});
