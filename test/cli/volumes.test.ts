// sbx volume create|list|show|rm and sandbox create --volume from the command line,
// in-process against the embedded backend: the --json documents, a bad --volume refused
// before anything is sent (125), rm of a volume in use refused naming the sandbox;
// sbx cp into and out of volume/NAME:PATH.

import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { homeSbx } from "../support/home-backend.js";
import { describeNeeding } from "../support/requirements.js";

describeNeeding(["bwrap", "setfacl"], "sbx volume", () => {
  it("creates, lists, shows, mounts and removes a volume; rm in use is refused naming the sandbox", async ({
    onTestFinished,
  }) => {
    const { sbx } = await homeSbx(onTestFinished, "sbx-cli-volume-");
    const made = await sbx(["volume", "create", "deps", "--json"]);
    expect(made.code, made.err).toBe(0);
    expect(Object.keys(JSON.parse(made.out)).sort()).toEqual(
      ["created_at", "free_bytes", "gid", "host_path", "name", "ownership", "size_bytes", "used_by"].sort(),
    );
    const tiny = await sbx(["volume", "create", "tiny", "--size", "1MiB"]);
    expect([tiny.code, tiny.err]).toEqual([125, "sbx: --size 1MiB: a size of at least 16MiB, e.g. 512MiB or 2GiB\n"]);
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

describeNeeding(["bwrap", "setfacl"], "sbx cp and a volume", () => {
  it("copies into volume/NAME:PATH, a sandbox mounting it reads it, and copies back out; a bad address is 125", async ({
    onTestFinished,
  }) => {
    const { home, sbx } = await homeSbx(onTestFinished, "sbx-cli-volume-cp-");
    const src = path.join(home, "src");
    fs.mkdirSync(path.join(src, "lib"), { recursive: true });
    fs.writeFileSync(path.join(src, "lib", "a.txt"), "from the host\n");
    fs.writeFileSync(path.join(home, "one.txt"), "one\n");
    expect((await sbx(["volume", "create", "deps"])).code).toBe(0);
    const tree = await sbx(["cp", src, "volume/deps:/"]);
    expect(tree, tree.err).toMatchObject({ code: 0 });
    expect(tree.err).toMatch(/^sbx: copied 2 entries, .* of tar to volume\/deps:\/src\n$/);
    const file = await sbx(["cp", path.join(home, "one.txt"), "volume/deps:"]);
    expect(file.err).toBe("sbx: copied 4 B to volume/deps:/one.txt\n");
    expect((await sbx(["sandbox", "create", "box", "--isolation", "bwrap", "-v", "deps:/deps"])).code).toBe(0);
    const seen = await sbx([
      "exec",
      "-s",
      "box",
      "--",
      "sh",
      "-c",
      "cat /deps/src/lib/a.txt /deps/one.txt; echo made > /deps/src/b",
    ]);
    expect(seen, seen.err).toMatchObject({ code: 0, out: "from the host\none\n" });
    const out = path.join(home, "out");
    const back = await sbx(["cp", "volume/deps:/src", out]);
    expect(back, back.err).toMatchObject({ code: 0 });
    expect(fs.readFileSync(path.join(out, "b"), "utf8")).toBe("made\n");
    expect(fs.readFileSync(path.join(out, "lib", "a.txt"), "utf8")).toBe("from the host\n");
    const piped = await sbx(["cp", "volume/deps:one.txt", "-"]);
    expect(piped.code).toBe(0);
    for (const [argv, said] of [
      [["cp", "one.txt", "volume/deps:/a/../../x"], "a path in a volume may not contain .."],
      [["cp", "one.txt", "volume/Bad:/x"], "volume/Bad:/x:"],
      [["cp", "volume/nope:/x", out], 'no volume "nope"'],
    ] as const) {
      const r = await sbx([...argv]);
      expect(r.code, argv.join(" ")).toBe(125);
      expect(r.err).toContain(said);
    }
  });
});
