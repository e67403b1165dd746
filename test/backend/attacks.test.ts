// Hostile commands in a bwrap sandbox, one attack per test, each proving the host is
// unchanged afterwards; and one test per protection of the driver (args.ts) that fails
// when that protection is removed (docs/drivers.md, "Threat model"). Run as root in
// CI, where they matter most: a command must never be the host's root.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapArguments } from "../../src/backend/drivers/bwrap/args.js";
import { WorkspaceGate } from "../../src/backend/drivers/bwrap/gate.js";
import { readHostView } from "../../src/backend/drivers/bwrap/host-view.js";
import { INSIDE_ID, isSandboxUid, SANDBOX_UID_FIRST } from "../../src/backend/drivers/identity.js";
import { ARCHES, hostArch } from "../../src/backend/drivers/seccomp/syscalls.js";
import { describeNeeding, itNeeding, meets } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";
import {
  AS_ROOT,
  createDefaultSandbox,
  processesWithArg,
  startTestBackend,
  type TestBackend,
  tcpClient,
  uniqueSleep,
  until,
} from "./support.js";

const EXECUTE = "/api/v1/sandbox/default/execute";
/** A directory anyone may write (so that whoever loads the library could leave its marker). */
function openDir(prefix: string): string {
  const dir = tempDir(prefix);
  fs.chmodSync(dir, 0o777);
  return dir;
}

/** A shared library that, once loaded, appends "pid uid" to the file named by SBX_TEST_MARKER. */
const evilLibrary = (() => {
  if (!meets("cc")) return { lib: null };
  const dir = openDir("sbx-evil-");
  const source = path.join(dir, "evil.c");
  fs.writeFileSync(
    source,
    `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
  const char *p = getenv("SBX_TEST_MARKER");
  FILE *f = p ? fopen(p, "a") : NULL;
  if (f) { fprintf(f, "%d %d\\n", (int)getpid(), (int)getuid()); fclose(f); }
}
`,
  );
  const lib = path.join(dir, "evil.so");
  const cc = spawnSync("cc", ["-shared", "-fPIC", "-o", lib, source], { encoding: "utf8" });
  if (cc.status !== 0) throw new Error(`cc could not build the test library: ${cc.stderr || cc.error}`);
  fs.chmodSync(dir, 0o755);
  return { lib };
})();

describeNeeding("bwrap", "attacks on a bwrap sandbox", () => {
  let b: TestBackend;
  let workspace: string;
  beforeAll(async () => {
    b = await startTestBackend();
    await createDefaultSandbox(b, "bwrap");
    workspace = (await b.api("GET", "/api/v1/sandbox/default")).json.host_workspace;
  });
  afterAll(async () => {
    await b.stop();
  });
  // biome-ignore lint/suspicious/noExplicitAny: the execution record as JSON
  const run = async (command: string | string[], env: Record<string, string> = {}): Promise<any> =>
    (await b.api("POST", EXECUTE, { body: { command, env } })).json;

  describe("no host-root identity", () => {
    itNeeding("root", "runs commands as the sandbox's own unprivileged host uid", async () => {
      const tag = uniqueSleep();
      const started = b.api("POST", EXECUTE, { body: { command: `touch made-here; sleep ${tag}` } });
      await until(() => processesWithArg(tag).length === 1, 10_000, "the command to run");
      const [pid] = processesWithArg(tag);
      const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const uids = status
        .match(/^Uid:\s+(.*)$/m)![1]!
        .split(/\s+/)
        .map(Number);
      const gids = status
        .match(/^Gid:\s+(.*)$/m)![1]!
        .split(/\s+/)
        .map(Number);
      expect(new Set(uids).size).toBe(1);
      expect(isSandboxUid(uids[0]!)).toBe(true);
      expect(gids).toEqual(uids);
      expect(status).toMatch(/^Groups:\s*$/m);
      process.kill(pid!, "SIGKILL");
      await started;
      const made = fs.statSync(path.join(workspace, "made-here"));
      expect(made.uid).toBe(uids[0]);
      expect(fs.statSync(workspace).uid).toBe(uids[0]);
    });

    it("cannot change a kernel setting of the host: /proc/sys is read-only inside, and the host value stays", async () => {
      const file = "/proc/sys/kernel/printk_ratelimit";
      const before = fs.readFileSync(file, "utf8");
      const next = String(Number(before.trim()) + 1);
      const res = await run(
        `echo ${next} > ${file}; echo 1 > /proc/sys/vm/drop_caches; echo '|/tmp/x' > /proc/sys/kernel/core_pattern; ` +
          "grep ' /proc/sys ' /proc/self/mountinfo",
      );
      expect(fs.readFileSync(file, "utf8")).toBe(before);
      // Read-only as a mount (not merely not permitted): the protection of its own, whoever the command is.
      expect(res.stderr.match(/Read-only file system/g)?.length).toBe(3);
      expect(res.stdout).toMatch(/ \/proc\/sys ro,/);
    });

    itNeeding("sysrq", "cannot reach /proc/sysrq-trigger", async () => {
      const res = await run("echo h > /proc/sysrq-trigger; stat -c '%t:%T' /proc/sysrq-trigger");
      expect(res.stdout).toBe("1:3\n");
    });

    it("has no /sys, no /root, no home directories and none of the backend's state", async () => {
      const res = await run(`ls /sys; ls /root; ls /home; ls ${b.dataDir}; echo done`);
      expect(res.stdout).toBe("done\n");
    });

    it("has namespaces of its own (user, mount, pid, ipc, uts, net, cgroup) and no capability", async () => {
      const kinds = ["user", "mnt", "pid", "ipc", "uts", "net", "cgroup"];
      const res = await run(
        `for n in ${kinds.join(" ")}; do readlink /proc/self/ns/$n; done; grep CapEff /proc/self/status`,
      );
      const lines = res.stdout.trim().split("\n");
      expect(lines.slice(0, kinds.length)).toEqual(kinds.map((k) => expect.stringMatching(new RegExp(`^${k}:\\[`))));
      for (const [i, kind] of kinds.entries()) {
        if (kind === "cgroup" && !fs.existsSync("/proc/self/ns/cgroup")) continue;
        expect(lines[i], kind).not.toBe(fs.readlinkSync(`/proc/self/ns/${kind}`));
      }
      expect(lines.at(-1)).toBe("CapEff:\t0000000000000000");
    });

    it("has a /tmp and a /var/tmp of its own: writable inside, nothing on the host", async () => {
      const name = `sbx-private-${process.pid}-${Date.now()}`;
      const res = await run(`touch /tmp/${name} /var/tmp/${name} && echo ok`);
      expect(res.stdout).toBe("ok\n");
      expect(fs.existsSync(path.join("/tmp", name))).toBe(false);
      expect(fs.existsSync(path.join("/var/tmp", name))).toBe(false);
    });

    it("runs in a session of its own: no terminal of the host's to push input into", async () => {
      // Field 6 of stat: the session id, as this pid namespace sees it; 0 would be a session outside.
      const res = await run("cut -d' ' -f6 /proc/self/stat");
      expect(res.stdout).not.toBe("0\n");
      expect(Number(res.stdout)).toBeGreaterThan(0);
    });

    it("runs under its own hostname", async () => {
      const res = await run("hostname; cat /proc/sys/kernel/hostname");
      expect(res.stdout).toBe("sbx\nsbx\n");
      expect(os.hostname()).not.toBe("sbx");
    });

    it("hides what only root could read in /etc: /etc/shadow is /dev/null, /etc/ssl/private an empty tmpfs", async () => {
      const res = await run(
        "stat -c '%t:%T' /etc/shadow; cat /etc/shadow | wc -c; stat -f -c %T /etc/ssl/private 2>&1; ls -A /etc/ssl/private",
      );
      const [device, bytes, fsType, ...listing] = res.stdout.trim().split("\n");
      expect(device).toBe("1:3");
      expect(bytes).toBe("0");
      if (fs.existsSync("/etc/ssl/private")) {
        expect(fsType).toBe("tmpfs");
        expect(listing).toEqual([]);
      }
    });

    it("shows no host path and none of its options in /proc/1/cmdline", async () => {
      const secret = `value-${process.pid}-${Date.now()}`;
      const res = await run("tr '\\0' ' ' < /proc/1/cmdline", { SBX_TEST_SECRET: secret });
      expect(res.stdout).toMatch(/^\/usr\/bin\/bwrap --args 3 -- /);
      for (const hidden of [workspace, b.dataDir, secret, "--bind", "--setenv", "--seccomp"]) {
        expect(res.stdout).not.toContain(hidden);
      }
    });

    it("cannot make a user namespace: a nested one forbids it (--disable-userns), and unshare -U fails", async () => {
      const res = await run("cat /proc/self/uid_map; unshare -U true && echo made-one");
      expect(res.stdout).not.toContain("made-one");
      if (AS_ROOT) {
        // bwrap nests a second user namespace below one that allows no more: inside, the
        // command's uid maps to the outer namespace's 0 (itself the sandbox's host uid),
        // not straight to the host uid as it would without --disable-userns.
        expect(res.stdout.trim().split(/\s+/).slice(0, 3)).toEqual(["65534", "0", "1"]);
      }
    });

    it("never answers the workspace's host path over TCP", async () => {
      const token = "t".repeat(40);
      const tcp = await startTestBackend({ listen: { host: "127.0.0.1", port: 0 }, token });
      const client = tcpClient(tcp.handle.port!);
      try {
        const auth = { headers: { authorization: `Bearer ${token}` } };
        const shown = (await client.api("GET", "/api/v1/sandbox/default", auth)).json;
        expect(shown.sandbox_id).toMatch(/^sbx_/);
        expect(shown.host_workspace).toBeNull();
        expect(JSON.stringify(shown)).not.toContain(tcp.dataDir);
        expect((await tcp.api("GET", "/api/v1/sandbox/default")).json.host_workspace).toContain(tcp.dataDir);
      } finally {
        await client.close();
        await tcp.stop();
      }
    });
  });

  describe("the options alone, without the syscall filter (the two overlap: each is proven on its own)", () => {
    it("forbid new user namespaces (--disable-userns)", () => {
      // bwrap started as a run is (through the gate as a sandbox's uid, when root) with
      // the driver's options for a run, minus the filter.
      const ws = path.join(tempDir("sbx-opts-"), "workspace");
      fs.mkdirSync(ws);
      const uid = AS_ROOT ? SANDBOX_UID_FIRST : process.getuid!();
      fs.chownSync(ws, uid, uid);
      const which = (p: string) => spawnSync("sh", ["-c", `command -v ${p}`], { encoding: "utf8" }).stdout.trim();
      const gate = AS_ROOT
        ? new WorkspaceGate({
            bwrap: which("bwrap"),
            nsenter: which("nsenter"),
            mount: which("mount"),
            umount: which("umount"),
          })
        : null;
      try {
        const args = bwrapArguments({
          view: readHostView(),
          insideId: AS_ROOT ? INSIDE_ID : null,
          network: "none",
          resolvConf: null,
          fds: { seccomp: null, status: null, setup: null },
          workspace: { path: gate === null ? ws : gate.pathFor(ws) },
          runDir: null,
          cwd: "/workspace",
          env: { PATH: "/usr/bin:/bin" },
        });
        const argv = [...args, "--", "sh", "-c", "unshare -U true && echo made-one"];
        const launch =
          gate === null ? { file: "bwrap", args: argv } : gate.enter({ uid, gid: uid }, which("bwrap"), argv);
        const res = spawnSync(launch.file, launch.args, { encoding: "utf8", env: {} });
        expect(res.stderr).toMatch(/No space left on device/);
        expect(res.stdout).not.toContain("made-one");
      } finally {
        gate?.stop();
      }
    });
  });

  describe("nothing of a request runs on the host side", () => {
    it("starts bwrap with an empty environment (the request's is set inside only)", async () => {
      const tag = uniqueSleep();
      const started = b.api("POST", EXECUTE, {
        body: { command: ["sh", "-c", `echo $LD_PRELOAD; sleep ${tag}`], env: { LD_PRELOAD: "/nonexistent.so" } },
      });
      await until(() => processesWithArg(tag).length === 1, 10_000, "the command to run");
      const [pid] = processesWithArg(tag);
      // The sandbox's init is the command's parent, bwrap's pid 1 the init's, and bwrap
      // itself, on the host, that one's: the sandbox's leader, started by the backend.
      const parent = (p: number) => Number(fs.readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      const ns = (p: number) => fs.readlinkSync(`/proc/${p}/ns/pid`);
      let bwrap = pid!;
      while (ns(bwrap) !== ns(process.pid)) bwrap = parent(bwrap);
      expect(fs.readFileSync(`/proc/${bwrap}/comm`, "utf8").trim()).toBe("bwrap");
      expect(parent(bwrap)).toBe(process.pid);
      expect(fs.readFileSync(`/proc/${bwrap}/environ`, "utf8")).toBe("");
      process.kill(pid!, "SIGKILL");
      expect((await started).json.stdout).toBe("/nonexistent.so\n");
    });

    describeNeeding("cc", "LD_PRELOAD and BASH_ENV", () => {
      let hostDir: string;
      beforeAll(() => {
        hostDir = openDir("sbx-marker-");
        fs.writeFileSync(path.join(hostDir, "evil.sh"), `echo sourced >> ${hostDir}/bash-marker\n`);
      });
      const attack = () => ({
        LD_PRELOAD: evilLibrary.lib!,
        LD_AUDIT: evilLibrary.lib!,
        SBX_TEST_MARKER: path.join(hostDir, "marker"),
        BASH_ENV: path.join(hostDir, "evil.sh"),
      });
      const noMarker = () => {
        expect(fs.existsSync(path.join(hostDir, "marker"))).toBe(false);
        expect(fs.existsSync(path.join(hostDir, "bash-marker"))).toBe(false);
      };

      it("an execution: the host's library never loads, the host's script never runs", async () => {
        const res = await run(["bash", "-c", "echo ran"], attack());
        expect(res.stdout).toBe("ran\n");
        noMarker();
      });

      it("a process start", async () => {
        const res = await b.api("POST", "/api/v1/sandbox/default/processes", {
          body: { command: ["bash", "-c", "echo ran"], env: attack() },
        });
        expect(res.status).toBe(201);
        await until(
          async () =>
            (await b.api("GET", `/api/v1/sandbox/default/processes/${res.json.process_id}`)).json.state === "exited",
          10_000,
          "the process to end",
        );
        noMarker();
      });

      it("a job", async () => {
        const res = await b.api("POST", "/api/v1/sandbox/default/jobs", {
          body: {
            request_id: `r-${process.pid}-${Date.now()}`,
            jobs: [{ name: "j", command: "bash -c 'echo ran'", env: attack() }],
          },
        });
        expect(res.status).toBe(201);
        const id = res.json.jobs[0].job_id;
        await until(
          async () => (await b.api("GET", `/api/v1/sandbox/default/jobs/${id}`)).json.status === "succeeded",
          10_000,
          "the job to end",
        );
        noMarker();
      });

      it("inside, they are the command's business: a library in the workspace loads there", async () => {
        fs.copyFileSync(evilLibrary.lib!, path.join(workspace, "evil.so"));
        const res = await run("true", { LD_PRELOAD: "/workspace/evil.so", SBX_TEST_MARKER: "/workspace/marker" });
        expect(res.exit_code).toBe(0);
        const marker = fs.readFileSync(path.join(workspace, "marker"), "utf8");
        expect(marker).toMatch(/^\d+ \d+\n/);
        if (AS_ROOT) expect(isSandboxUid(fs.statSync(path.join(workspace, "marker")).uid)).toBe(true);
        noMarker();
      });
    });
  });

  describe("the syscall filter", () => {
    itNeeding("seccomp", "refuses each filtered syscall from a program inside", async () => {
      const nr = ARCHES[hostArch()!].numbers;
      const calls: Array<[string, number, number[], string]> = [
        ["keyctl", nr.keyctl!, [0], "EPERM"],
        ["add_key", nr.add_key!, [0, 0, 0, 0, 0], "EPERM"],
        ["request_key", nr.request_key!, [0, 0, 0, 0], "EPERM"],
        ["bpf", nr.bpf!, [0, 0, 0], "EPERM"],
        ["perf_event_open", nr.perf_event_open!, [0, 0, -1, -1, 0], "EPERM"],
        ["userfaultfd", nr.userfaultfd!, [0], "EPERM"],
        ["kexec_load", nr.kexec_load!, [0, 0, 0, 0], "EPERM"],
        ["init_module", nr.init_module!, [0, 0, 0], "EPERM"],
        ["finit_module", nr.finit_module!, [0, 0, 0], "EPERM"],
        ["delete_module", nr.delete_module!, [0, 0], "EPERM"],
        ["mount", nr.mount!, [0, 0, 0, 0, 0], "EPERM"],
        ["umount2", nr.umount2!, [0, 0], "EPERM"],
        ["pivot_root", nr.pivot_root!, [0, 0], "EPERM"],
        ["move_mount", nr.move_mount!, [0, 0, 0, 0, 0], "EPERM"],
        ["open_tree", nr.open_tree!, [0, 0, 0], "EPERM"],
        ["fsopen", nr.fsopen!, [0, 0], "EPERM"],
        ["swapon", nr.swapon!, [0, 0], "EPERM"],
        ["swapoff", nr.swapoff!, [0], "EPERM"],
        ["reboot", nr.reboot!, [0, 0, 0, 0], "EPERM"],
        ["open_by_handle_at", nr.open_by_handle_at!, [0, 0, 0], "EPERM"],
        ["io_uring_setup", nr.io_uring_setup!, [1, 0], "EPERM"],
        ["unshare(CLONE_NEWUSER)", nr.unshare!, [0x10000000], "EPERM"],
        ["clone(CLONE_NEWUSER)", nr.clone!, [0x10000000 | 17, 0, 0, 0, 0], "EPERM"],
        ["clone3", nr.clone3!, [0, 0], "ENOSYS"],
        ["ioctl(TIOCSTI)", nr.ioctl!, [0, 0x5412, 0], "EPERM"],
        ["ioctl(TIOCLINUX)", nr.ioctl!, [0, 0x541c, 0], "EPERM"],
      ];
      const program = [
        "import ctypes, errno",
        "libc = ctypes.CDLL(None, use_errno=True)",
        "for name, nr, args in CALLS:",
        "    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])",
        "    print(name, errno.errorcode.get(ctypes.get_errno(), '?') if r == -1 else 'ok')",
      ].join("\n");
      const res = await run([
        "python3",
        "-c",
        `CALLS = ${JSON.stringify(calls.map(([n, r, a]) => [n, r, a]))}\n${program}`,
      ]);
      expect(res.stderr).toBe("");
      expect(res.stdout).toBe(calls.map(([name, , , want]) => `${name} ${want}\n`).join(""));
    });

    itNeeding("tools", "lets ordinary programs work: sh, python3, node, cc and make, git, tar, curl", async () => {
      const script = [
        "set -e",
        "cd $(mktemp -d /workspace/tools-XXXX)",
        "sh -c 'echo sh-ok'",
        'python3 -c \'import subprocess, threading; print(subprocess.run(["echo", "python3-ok"], capture_output=True, text=True).stdout, end="")\'',
        'node -e \'require("child_process").execFileSync("true"); console.log("node-ok")\'',
        "printf 'int main(void){return 0;}\\n' > m.c && printf 'm: m.c\\n\\tcc -o m m.c\\n' > Makefile && make -s && ./m && echo make-ok",
        "git init -q r && cd r && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && cd .. && echo git-ok",
        "tar -cf t.tar m.c Makefile && tar -tf t.tar >/dev/null && echo tar-ok",
        "echo hi > f && curl -s file://$PWD/f >/dev/null && echo curl-ok",
      ].join("\n");
      const res = await run(script);
      expect(res.stderr).toBe("");
      expect(res.stdout).toBe("sh-ok\npython3-ok\nnode-ok\nmake-ok\ngit-ok\ntar-ok\ncurl-ok\n");
    });
  });
});
