// The bwrap probe's answers (src/backend/drivers/bwrap/probe.ts, docs/drivers.md
// "Probe"), each made to happen for real: bwrap missing or unable to run here is a
// fall-back to `none` said with its reason; bwrap that runs here but not with sbx's
// own options is an error at daemon start (sandbox_driver_broken), never a silent
// fall-back to no isolation.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import type { DriverHost } from "../../src/backend/drivers/driver.js";
import { BwrapDriver } from "../../src/backend/drivers/bwrap/driver.js";
import { DaemonStartError } from "../../src/backend/errors.js";
import { describeNeeding } from "../support/requirements.js";
import { tempDir } from "./support.js";

const host: DriverHost = {
  uid: process.getuid!(),
  username: os.userInfo().username,
  path: process.env.PATH ?? "/usr/bin:/bin",
};

describeNeeding("bwrap", "the bwrap probe", () => {
  it("with sbx's own options here: available", () => {
    expect(new BwrapDriver({ host }).probe()).toMatchObject({ available: true, reason: null });
  });

  it("bwrap not on PATH: unavailable, saying how to install it", () => {
    const probe = new BwrapDriver({ host: { ...host, path: tempDir("sbx-nopath-") } }).probe();
    expect(probe.available).toBe(false);
    expect(probe.reason).toMatch(/^bwrap is not on PATH: install bubblewrap/);
  });

  it("a bwrap that cannot run here: unavailable, with why", () => {
    const program = path.join(tempDir("sbx-badbwrap-"), "bwrap");
    fs.writeFileSync(program, "not a program\n", { mode: 0o644 });
    const probe = new BwrapDriver({ host, program }).probe();
    expect(probe.available).toBe(false);
    expect(probe.reason).toContain(`${program} cannot run (`);
  });

  it("bwrap that runs here, but not with sbx's options: an error at daemon start, not a fall-back", () => {
    // Step 2 (a plain sandbox) needs no /etc; the run's own options bind it.
    const etcDir = path.join(tempDir("sbx-noetc-"), "etc");
    let thrown: unknown;
    try {
      new BwrapDriver({ host, etcDir }).probe();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DaemonStartError);
    expect((thrown as DaemonStartError).code).toBe("sandbox_driver_broken");
    expect((thrown as Error).message).toMatch(/not with sbx's sandbox options .*--no-bwrap/);
  });
});
