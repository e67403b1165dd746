// sbx sandbox pause / resume from the command line, in-process against the embedded
// backend: an exec into a paused sandbox is refused (exit 125, nothing ran) with the
// command that resumes it, list and show say paused, resume lets the next exec run.

import { expect, it } from "vitest";
import { homeSbx } from "../support/home-backend.js";
import { describeNeeding } from "../support/requirements.js";

describeNeeding(["bwrap", "cgroupFreezer"], "sbx sandbox pause and resume", () => {
  it("refuses exec into a paused sandbox naming sbx sandbox resume, shows it paused, runs again once resumed", async ({
    onTestFinished,
  }) => {
    const { sbx } = await homeSbx(onTestFinished, "sbx-cli-pause-");
    expect((await sbx(["sandbox", "create", "build", "--isolation", "bwrap"])).code).toBe(0);
    expect((await sbx(["exec", "-s", "build", "--", "true"])).code).toBe(0);
    const paused = await sbx(["sandbox", "pause", "build"]);
    expect(paused).toMatchObject({ code: 0, out: "" });
    expect(paused.err).toMatch(
      /^sbx: paused sandbox build: its \d+ process\(es\) are frozen; sbx sandbox resume build thaws them\n$/,
    );

    const refused = await sbx(["exec", "-s", "build", "--", "echo", "never"]);
    expect(refused.code).toBe(125);
    expect(refused.out).toBe("");
    expect(refused.err).toContain(
      "sandbox build is paused: nothing was run; resume it first (sbx sandbox resume build)",
    );

    const list = await sbx(["sandbox", "list", "--json"]);
    expect(JSON.parse(list.out).sandboxes).toContainEqual(expect.objectContaining({ name: "build", status: "paused" }));
    const show = await sbx(["sandbox", "show", "build", "--json"]);
    expect(JSON.parse(show.out).environment.state).toBe("paused");

    const resumed = await sbx(["sandbox", "resume", "build"]);
    expect(resumed.code).toBe(0);
    expect(resumed.err).toMatch(/^sbx: sandbox build is running: its \d+ process\(es\) go on where they stopped\n$/);
    const ran = await sbx(["exec", "-s", "build", "--", "echo", "again"]);
    expect(ran).toMatchObject({ code: 0, out: "again\n" });
  });
});
