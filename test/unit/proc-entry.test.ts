// What the drivers read of a process in /proc (src/backend/drivers/proc.ts): a live
// sandbox's "is its init there?" check (bwrap/environment.ts) leans on `exiting`, since
// a dying process closes its descriptors before it is a zombie.

import { spawn } from "node:child_process";
import { afterEach, expect, it } from "vitest";
import fs from "node:fs";
import { readProcEntry } from "../../src/backend/drivers/proc.js";
import { until } from "../support/wait.js";

/** Every process whose parent is `pid`, zombies included. */
const childrenOf = (pid: number) =>
  fs
    .readdirSync("/proc")
    .filter((n) => /^[0-9]+$/.test(n))
    .map((n) => readProcEntry(Number(n)))
    .filter((e) => e !== null && e.ppid === pid)
    .map((e) => e!.pid);

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

it("a live process is not exiting; a zombie is (PF_EXITING stays set), and both are read by pid", async () => {
  const self = readProcEntry(process.pid);
  expect(self).toMatchObject({ pid: process.pid, ppid: process.ppid, exiting: false });
  expect(self?.state).not.toBe("Z");
  // `sleep 60` never reaps the `true` it was left with: a zombie to read.
  const parent = spawn("sh", ["-c", "true & exec sleep 60"], { stdio: "ignore" });
  started.push(parent.pid!);
  // Waited for whole: the zombie can be there while its parent is still the shell, not yet sleep.
  const zombie = await until(
    () => {
      if (readProcEntry(parent.pid!)?.name !== "sleep") return undefined;
      const child = childrenOf(parent.pid!)[0];
      const entry = child === undefined ? null : readProcEntry(child);
      return entry?.state === "Z" ? entry : undefined;
    },
    30_000,
    "the shell to become sleep, left with a zombie",
  );
  expect(zombie.exiting).toBe(true);
  expect(readProcEntry(parent.pid!)).toMatchObject({ name: "sleep", exiting: false });
});

it("a process that is gone reads as null", async () => {
  const child = spawn("true", { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  expect(readProcEntry(child.pid!)).toBeNull();
});

it("processTree: a process and everything descended from it, zombies left out, without a scan of /proc", async () => {
  // sh starts a sleep and a child that exits, then becomes a sleep that never reaps that child.
  const child = spawn("sh", ["-c", "sleep 31 & true & exec sleep 32"], { stdio: "ignore" });
  started.push(child.pid!);
  const { processTree } = await import("../../src/backend/drivers/proc.js");
  // Once `true` has exited (a zombie its parent never reaps) and the sleep runs.
  const zombie = await until(
    () => childrenOf(child.pid!).find((pid) => readProcEntry(pid)?.state === "Z"),
    10_000,
    "the zombie",
  );
  const tree = await until(
    () => {
      const t = processTree(child.pid!);
      return t.length === 2 && t.every((p) => p.name === "sleep") ? t : undefined;
    },
    10_000,
    "the tree",
  );
  expect(tree[0]).toMatchObject({ pid: child.pid, name: "sleep" });
  expect(tree.map((p) => p.pid)).not.toContain(zombie);
  for (const p of tree) started.push(p.pid);
  // From further up, the same processes are found under this one.
  expect(processTree(process.pid).map((p) => p.pid)).toEqual(expect.arrayContaining(tree.map((p) => p.pid)));
});
