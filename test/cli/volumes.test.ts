// sbx volume create|list|show|rm and sandbox create --volume from the command line,
// in-process against the embedded backend: the --json documents, a bad --volume refused
// before anything is sent (125), rm of a volume in use refused naming the sandbox.

import { afterEach, expect, it } from "vitest";
import type { BackendHandle } from "../../src/backend/backend.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";
import { describeNeeding } from "../support/requirements.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describeNeeding(["bwrap", "setfacl"], "sbx volume", () => {
  it("creates, lists, shows, mounts and removes a volume; rm in use is refused naming the sandbox", async () => {
    const home = makeHome("sbx-cli-volume-");
    const backend: BackendHandle = await startHomeBackend(home, {});
    cleanups.push(
      () => removeHome(home),
      () => backend.close(),
    );
    const sbx = async (argv: string[]) => {
      const io = createBufferIO();
      const code = await main(argv, io, { SBX_HOME: home });
      return { code, out: io.stdoutText(), err: io.stderrText() };
    };
    const made = await sbx(["volume", "create", "deps", "--json"]);
    expect(made.code, made.err).toBe(0);
    expect(Object.keys(JSON.parse(made.out)).sort()).toEqual(
      ["created_at", "gid", "host_path", "name", "ownership", "used_by"].sort(),
    );
    const bad = await sbx(["sandbox", "create", "x", "--volume", "deps:/workspace/deps"]);
    expect(bad.code).toBe(125);
    expect(bad.err).toContain("/workspace is the sandbox's own");
    const box = await sbx(["sandbox", "create", "box", "--isolation", "bwrap", "-v", "deps:/deps:ro", "--json"]);
    expect(box.code, box.err).toBe(0);
    expect(JSON.parse(box.out).volumes).toEqual([{ name: "deps", path: "/deps", read_only: true }]);
    const list = await sbx(["volume", "list", "--json"]);
    expect(JSON.parse(list.out).volumes).toEqual([expect.objectContaining({ name: "deps", used_by: ["box"] })]);
    const shown = await sbx(["volume", "show", "deps"]);
    expect(shown.out).toContain("used_by\tbox");
    const busy = await sbx(["volume", "rm", "deps"]);
    expect(busy.code).not.toBe(0);
    expect(busy.err).toContain("volume deps is mounted by sandbox(es) box");
    expect((await sbx(["sandbox", "rm", "box", "--force"])).code).toBe(0);
    const gone = await sbx(["volume", "rm", "deps"]);
    expect(gone).toMatchObject({ code: 0, err: "sbx: removed volume deps and its files\n" });
    expect(JSON.parse((await sbx(["volume", "list", "--json"])).out)).toEqual({ volumes: [] });
  });
});
