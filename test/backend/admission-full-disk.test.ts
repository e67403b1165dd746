// One admission for executions, supervised processes and jobs (src/backend/runs/admission.ts):
// on a full disk (a small tmpfs, as root) none of them can be stored, so none is
// started: each answers 503 not_started (storage_unavailable, with a retry hint),
// nothing of its command runs, and the same request is admitted once there is room.

import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { fillUntilFree, smallTmpfs } from "../support/tmpfs.js";
import { backendsPerTest, type TestBackend, until, workspaceOf } from "./support.js";
import { describeNeeding } from "../support/requirements.js";

const start = backendsPerTest();
const SANDBOX = "/api/v1/sandbox/default";

/** The three ways to start a command, each touching `marker` in the workspace. */
const STARTS: Array<{ kind: string; path: string; body: (marker: string) => unknown }> = [
  { kind: "an execution", path: `${SANDBOX}/execute`, body: (m) => ({ command: `touch ${m}` }) },
  { kind: "a supervised process", path: `${SANDBOX}/processes`, body: (m) => ({ command: `touch ${m}` }) },
  {
    kind: "a jobs submission",
    path: `${SANDBOX}/jobs`,
    body: (m) => ({ request_id: `full-${m}`, jobs: [{ name: "touch", command: `touch ${m}` }] }),
  },
];

async function fullBackend(t: { onTestFinished(fn: () => Promise<void>): void }): Promise<{
  b: TestBackend;
  workspace: string;
  filler: string;
}> {
  const fsys = smallTmpfs("16m");
  const b = await start({}, fsys.dir);
  t.onTestFinished(async () => {
    await b.stop();
    fsys.cleanup();
  });
  // The sandbox exists before the disk fills: what is refused is the admission alone.
  const workspace = await workspaceOf(b);
  return { b, workspace, filler: fillUntilFree(fsys.dir) };
}

describeNeeding("tmpfs", "admission on a full disk (a small tmpfs, as root)", () => {
  it.for(STARTS)(
    "$kind that cannot be stored is 503 not_started, nothing ran, and is admitted once there is room",
    async ({ path: route, body }, t) => {
      const { b, workspace, filler } = await fullBackend(t);
      const key = { "Idempotency-Key": `full-${path.basename(route)}` };
      const refused = await b.api("POST", route, { body: body("ran"), headers: key });
      expect(refused.status).toBe(503);
      expect(refused.headers["retry-after"]).toBe("2");
      expect(refused.json.error).toMatchObject({
        code: "not_started",
        details: { reason: "storage_unavailable", retry_after_ms: 2000 },
      });
      expect(refused.json.error.message).toContain("nothing was started");
      expect(fs.existsSync(path.join(workspace, "ran"))).toBe(false);

      // Safe to send again: the same request, with the same key, runs once there is room.
      fs.rmSync(filler);
      const admitted = await b.api("POST", route, { body: body("ran"), headers: key });
      expect(admitted.status).toBeLessThan(300);
      await until(() => fs.existsSync(path.join(workspace, "ran")), 10_000, "the command to run once admitted");
    },
  );
});
