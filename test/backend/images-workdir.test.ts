// An image's WorkingDir (docs/images.md, "Who runs, and where"): commands in a sandbox
// made from it start there unless --cwd says otherwise (exec and supervised processes);
// a WorkingDir that leads out of the sandbox's root through a symlink is refused.

import { afterAll, beforeAll, expect, it } from "vitest";
import { buildLayout, busyboxEntries, type LayoutImage } from "../support/images.js";
import { type LocalHome, localHome } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";
import { until } from "../support/wait.js";

describeNeeding(["bwrap", "busyboxStatic"], "an image's WorkingDir", () => {
  let home: LocalHome;
  let app: LayoutImage;
  let escaping: LayoutImage;
  beforeAll(async () => {
    home = await localHome("sbx-image-workdir-");
    const base = busyboxEntries();
    app = await buildLayout(
      [[...base, { name: "srv/app/", type: "directory" }, { name: "srv/app/marker", data: "here\n" }]],
      {
        tag: "1",
        config: { WorkingDir: "/srv/app" },
      },
    );
    escaping = await buildLayout([[...base, { name: "leave", type: "symlink", linkname: "/proc/self/cwd" }]], {
      tag: "1",
      config: { WorkingDir: "/leave" },
    });
  });
  afterAll(async () => {
    await home?.close();
  });

  it("starts exec and process start in the image's WorkingDir, unless --cwd", async () => {
    expect((await home.sbx(["sandbox", "create", "wd", "--image", `oci:${app.dir}:1`])).code).toBe(0);
    const here = await home.sbx(["exec", "-s", "wd", "--", "sh", "-c", "pwd; echo $PWD; cat marker"]);
    expect(here.code, here.stderr).toBe(0);
    expect(here.stdout).toBe("/srv/app\n/srv/app\nhere\n");
    const asked = await home.sbx(["exec", "-s", "wd", "--cwd", "/workspace", "--", "pwd"]);
    expect(asked.stdout).toBe("/workspace\n");
    const started = await home.json<{ process_id: string; working_dir: string }>([
      "process",
      "start",
      "-s",
      "wd",
      "--json",
      "--",
      "sh",
      "-c",
      "pwd > /srv/app/where; sleep 60",
    ]);
    expect(started.result.code, started.result.stderr).toBe(0);
    await until(
      async () => (await home.sbx(["exec", "-s", "wd", "--", "cat", "/srv/app/where"])).stdout === "/srv/app\n",
      30_000,
      "the process to write its working directory",
    );
    expect((await home.sbx(["process", "stop", "-s", "wd", started.doc.process_id])).code).toBe(0);
  });

  it("keeps /workspace for a host-root sandbox and refuses a WorkingDir leaving the root", async () => {
    expect((await home.sbx(["sandbox", "create", "hostwd"])).code).toBe(0);
    expect((await home.sbx(["exec", "-s", "hostwd", "--", "pwd"])).stdout).toBe("/workspace\n");
    expect((await home.sbx(["sandbox", "create", "esc", "--image", `oci:${escaping.dir}:1`])).code).toBe(0);
    const r = await home.sbx(["exec", "-s", "esc", "--", "pwd"]);
    expect(r.code).toBe(125);
    expect(r.stderr).toContain("/leave leads outside the sandbox's root");
  });
});
