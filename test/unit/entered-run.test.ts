// A command entered into a live sandbox (src/backend/drivers/bwrap/entered-run.ts), its
// events fed by hand: an `exit` while the command's own process still runs is not
// believed (the init reaps a command before it says it exited), and its exit is told
// once its output connections are there. A command asked for held is got ready by the
// init (spawn held: true), started by a proceed, let go by a discard; what is written
// to its stdin reaches its connection only once the init says the command started
// (before, the init holds that connection, and its runtime may read what arrives).

import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/temp.js";
import { EnteredRun, type EnvironmentPort } from "../../src/backend/drivers/bwrap/entered-run.js";
import type { ProcEntry } from "../../src/backend/drivers/proc.js";
import { notMeasured } from "../../src/backend/drivers/limits/usage.js";

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
    measure: () => notMeasured("not measured in this test"),
    requestFork: (r) => requests.push(r),
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

  it("asks the init to get a held command ready, then says go, or lets it go", () => {
    const ready = port();
    const run = new EnteredRun(ready, command);
    run.prepare();
    expect(ready.requests).toEqual([expect.objectContaining({ op: "spawn", id: "r1", held: true })]);
    run.proceed();
    expect(ready.requests.at(-1)).toEqual({ op: "proceed", id: "r1" });

    const dropped = port();
    const never = new EnteredRun(dropped, command);
    never.prepare();
    // The admission could not be stored: the run is killed before it was ever let go.
    never.signal("SIGKILL");
    expect(dropped.requests.at(-1)).toEqual({ op: "discard", id: "r1" });
    expect(dropped.requests.some((r) => (r as { op: string }).op === "proceed")).toBe(false);
  });

  it("writes stdin to its connection only once the command started", async () => {
    // The init's end of the stdin connection: a real socket pair through a Unix socket.
    const dir = tempDir("sbx-entered-stdin-");
    const expected = "typed before the start\n";
    let received = "";
    let arrived: () => void = () => {};
    const whole = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = net.createServer((s) =>
      s.on("data", (c: Buffer) => {
        received += c.toString();
        if (received === expected) arrived();
      }),
    );
    const at = path.join(dir, "s.sock");
    await new Promise<void>((resolve) => server.listen(at, resolve));
    try {
      let attachStdin: ((s: net.Socket) => void) | null = null;
      const io = {
        expect: (take: (s: net.Socket) => void) => {
          attachStdin ??= take;
          return "t".repeat(32);
        },
        forget: () => {},
      } as unknown as EnvironmentPort["io"];
      const run = new EnteredRun(port({ io }), { ...command, stdin: true });
      run.prepare();
      const conn = net.connect(at);
      await new Promise((resolve) => conn.once("connect", resolve));
      attachStdin!(conn);
      run.stdin!.write(expected);
      run.proceed();
      // Held in stdin, not handed to the connection the init still holds.
      expect(conn.bytesWritten).toBe(0);
      expect(run.stdin!.writableLength).toBe(expected.length);
      run.onEvent({ ev: "started", id: "r1", pid: 999_999 });
      await whole;
      expect(received).toBe(expected);
      conn.destroy();
    } finally {
      server.close();
    }
  });
});
