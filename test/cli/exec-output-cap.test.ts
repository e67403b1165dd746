// Output past the backend's cap is never cut silently (issue 30, item 3): whenever what
// sbx exec printed is not all the command wrote, a line on stderr says so; --json says
// output_complete false with the bytes lost; --fail-on-truncated exits 201. In-process
// through main() against a real backend whose output cap is 64 KiB.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendHandle } from "../../src/backend/backend.js";
import { ExitCodes } from "../../src/common/exit-codes.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";

const CAP = 64 * 1024;
const WRITTEN = 1_000_000;
/** 1,000,000 bytes of "y" on stdout, then END: the END is past the cap. */
const BIG = ["sh", "-c", `head -c ${WRITTEN - 4} /dev/zero | tr '\\0' y; echo END`];

let home: string;
let backend: BackendHandle;

beforeAll(async () => {
  home = makeHome("sbx-exec-cap-");
  // A reader behind by more than 64 KiB past the cap holds the command back (so --stream gets every byte).
  backend = await startHomeBackend(home, {
    executionOutputMaxBytes: CAP,
    eventOutputBudget: 16 * 1024,
    liveQueueMaxBytes: CAP,
  });
});
afterAll(async () => {
  await backend.close();
  removeHome(home);
});

async function sbx(args: string[]) {
  const io = createBufferIO();
  const code = await main(args, io, { SBX_HOME: home });
  return { code, bytes: io.stdoutBytes(), out: io.stdoutText(), err: io.stderrText() };
}

/** The execution of the newest receipt. */
async function latestExecution(): Promise<string> {
  const [doc] = JSON.parse((await sbx(["receipts", "list", "--json", "--limit", "1"])).out) as Array<{
    execution_id: string;
  }>;
  return doc!.execution_id;
}

const LOST = `${WRITTEN - CAP} bytes of stdout were not kept by the backend (its output cap: it keeps the first ${CAP}); they are lost`;

describe("sbx exec of an output past the backend's cap", () => {
  it("prints what was kept and says, in a line of its own, how much was lost", async () => {
    const r = await sbx(["exec", "--", ...BIG]);
    expect(r.code, r.err).toBe(0);
    expect(r.bytes.equals(Buffer.alloc(CAP, "y"))).toBe(true);
    expect(r.err.split("\n")).toContain(`sbx: OUTPUT INCOMPLETE: ${LOST}`);
  });

  it("--fail-on-truncated: exits 201 instead of 0, saying why", async () => {
    const r = await sbx(["exec", "--fail-on-truncated", "--", ...BIG]);
    expect(r.code, r.err).toBe(ExitCodes.outputIncomplete);
    expect(r.code).toBe(201);
    expect(r.err).toContain("sbx: OUTPUT INCOMPLETE: ");
    expect(r.err).toContain("sbx: exit 201 (--fail-on-truncated)");
  });

  it("--fail-on-truncated: a command that failed keeps its own exit code", async () => {
    const r = await sbx(["exec", "--fail-on-truncated", "--", "sh", "-c", `${BIG[2]}; exit 3`]);
    expect(r.code, r.err).toBe(3);
    expect(r.err).toContain("sbx: OUTPUT INCOMPLETE: ");
  });

  it("--json: output_complete false, with the bytes of each stream not kept", async () => {
    const r = await sbx(["exec", "--json", "--", ...BIG]);
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out) as { output_complete: boolean; output_not_kept_bytes: Record<string, number> };
    expect(doc.output_complete).toBe(false);
    expect(doc.output_not_kept_bytes).toEqual({ stdout: WRITTEN - CAP, stderr: 0 });
  });

  it("--json --fail-on-truncated: exits 201", async () => {
    const r = await sbx(["exec", "--json", "--fail-on-truncated", "--", ...BIG]);
    expect(r.code, r.err).toBe(201);
    expect((JSON.parse(r.out) as { output_complete: boolean }).output_complete).toBe(false);
  });

  it("--stream: delivers every byte live past the cap, END included; says how much was kept", async () => {
    const r = await sbx(["exec", "--stream", "--fail-on-truncated", "--", ...BIG]);
    expect(r.code, r.err).toBe(0);
    expect(r.bytes.length).toBe(WRITTEN);
    expect(r.bytes.equals(Buffer.concat([Buffer.alloc(WRITTEN - 4, "y"), Buffer.from("END\n")]))).toBe(true);
    expect(r.err).not.toContain("OUTPUT INCOMPLETE");
    expect(r.err.split("\n")).toContain(
      `sbx: ${WRITTEN - CAP} bytes of stdout past byte ${CAP} were shown live but not kept by the backend (its output cap): no replay or record has them`,
    );
    // After the fact a replay has what was kept, and says the rest was not kept.
    const eid = await latestExecution();
    const replay = await sbx(["logs", eid]);
    expect(replay.bytes.equals(Buffer.alloc(CAP, "y")), replay.err).toBe(true);
    expect(replay.err).toContain(`${WRITTEN - CAP} bytes of stdout at offset ${CAP} were not kept by the backend`);
  });
});

describe("sbx exec of an output within the cap", () => {
  it("says nothing more, and --json says output_complete true", async () => {
    const cmd = ["sh", "-c", "head -c 2000000 /dev/zero | head -c 60000 | tr '\\0' y; echo two >&2"];
    const plain = await sbx(["exec", "--fail-on-truncated", "--", ...cmd]);
    expect(plain.code, plain.err).toBe(0);
    expect(plain.bytes.length).toBe(60_000);
    expect(plain.err).toBe("two\n");
    const json = await sbx(["exec", "--json", "--fail-on-truncated", "--", ...cmd]);
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({
      output_complete: true,
      output_not_kept_bytes: { stdout: 0, stderr: 0 },
    });
    const live = await sbx(["exec", "--stream", "--fail-on-truncated", "--", ...cmd]);
    expect(live.code, live.err).toBe(0);
    expect(live.bytes.length).toBe(60_000);
  });
});
