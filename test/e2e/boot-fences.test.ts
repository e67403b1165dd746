// Boot fences as a user meets them (docs/protocol.md, "Ownership fences"): a receipt
// keeps the backend boot its start was answered for, and sbx sends it. After `sbx
// daemon stop` and a start, the process the new daemon started again is another boot's
// run: what sbx does to it through the old receipt is refused (125, saying what is
// current and how to name it) and nothing reaches it; named without a receipt it acts
// as it always did. An execution's own boot stays its own.

import { describe, expect, it } from "vitest";
import { makeHome, removeHome, runSbx } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";
import { runMain, runMainJson } from "../support/in-process.js";
import { until } from "../support/wait.js";

interface Shown {
  state: string;
  restarts: number;
  os_pid: number | null;
  boot: string | null;
}

describe("boot fences after sbx daemon stop and start", () => {
  it("the old boot's receipt is refused with 125 and reaches nothing; a name or a run still acts", async () => {
    const home = makeHome();
    try {
      expect((await runSbx(["daemon", "start"], { home })).code).toBe(0);
      const health = async () => (await runMainJson<{ boot: string }>(["daemon", "status", "--json"], { home })).doc;
      const started = await runMainJson<{ receipt_id: string; process_id: string; boot: string | null }>(
        ["process", "start", "--json", "--name", "web", "--stdin", "--restart", "always", "--", "cat"],
        { home },
      );
      expect(started.result.code).toBe(0);
      const { receipt_id: receipt, process_id: id } = started.doc;
      const oldBoot = started.doc.boot!;
      expect(oldBoot).toMatch(/^boot_[0-9a-f]{16}$/);
      const ran = await runMainJson<{ boot: string; receipt_id: string }>(["exec", "--json", "--", "true"], { home });
      expect(ran.doc.boot).toBe(oldBoot);
      const shownReceipt = await runMain(["receipts", "show", receipt], { home });
      expect(shownReceipt.stdout).toMatch(new RegExp(`^Boot +${oldBoot}$`, "m"));

      expect((await runMain(["daemon", "stop"], { home })).code).toBe(0);
      expect((await runSbx(["daemon", "start"], { home })).code).toBe(0);
      const show = async () => (await runMainJson<Shown>(["process", "show", "web", "--json"], { home })).doc;
      const now = await until(
        async () => {
          const p = await show();
          return p.state === "running" && p.os_pid !== null ? p : undefined;
        },
        30_000,
        "web to run again under the new daemon",
      );
      expect(now.restarts).toBe(1);
      expect(now.boot).not.toBe(oldBoot);
      const newBoot = now.boot!;

      // Through the receipt (its id, or the process id a receipt keeps): the old boot goes with it.
      for (const args of [
        ["process", "signal", receipt, "KILL"],
        ["process", "signal", id, "KILL"],
        ["process", "stop", id, "--grace", "1s"],
      ]) {
        const refused = await runMain(args, { home });
        expect(refused.code, args.join(" ")).toBe(125);
        expect(refused.stderr).toContain(
          `${id} names ${oldBoot}, but the process's current run (run 1) was started in ${newBoot}; nothing was done`,
        );
        expect(refused.stderr).toContain(`sbx process show ${id}`);
        expect(refused.stderr).toContain(`${id}@1`);
      }
      const fed = await runMain(["process", "stdin", receipt], { home, input: "x" });
      expect(fed.code).toBe(125);
      expect(await show()).toMatchObject({ state: "running", restarts: 1, os_pid: now.os_pid });

      // The execution's record kept its boot: its own handle is still its own.
      const cancelled = await runMain(["cancel", ran.doc.receipt_id], { home });
      expect(cancelled.code).toBe(0);
      expect(cancelled.stdout).toMatch(/already succeeded/);

      // Without a boot it acts, as it always did: by name, or naming the run.
      expect((await runMain(["process", "stdin", "web"], { home, input: "y" })).code).toBe(0);
      const stopped = await runMain(["process", "stop", `${id}@1`, "--grace", "1s"], { home });
      expect(stopped.code).toBe(0);
      expect(await show()).toMatchObject({ state: "exited", restarts: 1 });
      expect((await health()).boot).toBe(newBoot);
    } finally {
      await stopDaemon(home);
      removeHome(home);
    }
  });
});
