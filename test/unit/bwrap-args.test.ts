// bwrap's options for one run (src/backend/drivers/bwrap/args.ts), a pure function:
// every protection the driver claims is an option here. What each one does to a
// hostile command is tested where it happens (test/backend/attacks.test.ts).

import { beforeEach, describe, expect, it } from "vitest";
import {
  bwrapArguments,
  bwrapCommandLine,
  encodeArguments,
  SANDBOX_HOSTNAME,
  type SandboxSpec,
} from "../../src/backend/drivers/bwrap/args.js";
import type { HostView } from "../../src/backend/drivers/bwrap/host-view.js";

const VIEW: HostView = {
  system: [
    { kind: "link", path: "/bin", target: "usr/bin" },
    { kind: "dir", path: "/lib64" },
  ],
  etcDir: "/etc",
  hiddenEtc: [
    { inside: "/etc/shadow", dir: false },
    { inside: "/etc/ssl/private", dir: true },
  ],
  resolvConfTarget: "/run/systemd/resolve/stub-resolv.conf",
  sysrqTrigger: true,
};

function spec(over: Partial<SandboxSpec> = {}): SandboxSpec {
  return {
    view: VIEW,
    insideId: 65534,
    network: "none",
    resolvConf: null,
    fds: { seccomp: 5, status: 4, setup: 7 },
    workspace: { path: "/dev/shm/abc" },
    runDir: { path: "/dev/shm/run" },
    cwd: "/workspace/src",
    env: { PATH: "/usr/bin:/bin", LD_PRELOAD: "/workspace/evil.so", BASH_ENV: "/workspace/x" },
    ...over,
  };
}

/** The values that follow an option, for every time it appears. */
function valuesOf(args: string[], option: string, count = 1): string[][] {
  const out: string[][] = [];
  args.forEach((a, i) => {
    if (a === option) out.push(args.slice(i + 1, i + 1 + count));
  });
  return out;
}

describe("bwrap's options for a run", () => {
  // Built in each test, never while the file is collected (docs/testing.md, "Mutation testing").
  let args: string[] = [];
  beforeEach(() => {
    args = bwrapArguments(spec());
  });

  it("makes a user namespace without further ones, and the run's own pid, ipc, uts, net and cgroup namespaces", () => {
    for (const flag of [
      "--unshare-user",
      "--disable-userns",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-uts",
      "--unshare-net",
      "--unshare-cgroup-try",
      "--die-with-parent",
      "--new-session",
    ]) {
      expect(args, flag).toContain(flag);
    }
    expect(valuesOf(args, "--hostname")).toEqual([[SANDBOX_HOSTNAME]]);
    // Not the host's, and not empty (bwrap would keep an empty one).
    expect(SANDBOX_HOSTNAME).toBe("sbx");
  });

  it("maps the command to nobody inside when started as a sandbox's own uid, and to itself otherwise", () => {
    expect(valuesOf(args, "--uid")).toEqual([["65534"]]);
    expect(valuesOf(args, "--gid")).toEqual([["65534"]]);
    const own = bwrapArguments(spec({ insideId: null }));
    expect(own).not.toContain("--uid");
    expect(own).not.toContain("--gid");
    // Nothing else differs.
    expect(own).toEqual(args.filter((_, i) => i < args.indexOf("--uid") || i > args.indexOf("--uid") + 3));
  });

  it("keeps the host's network only when asked, binding resolv.conf's target then", () => {
    const online = bwrapArguments(spec({ network: "host" }));
    expect(online).not.toContain("--unshare-net");
    expect(valuesOf(online, "--ro-bind-try", 2)).toEqual([[VIEW.resolvConfTarget!, VIEW.resolvConfTarget!]]);
    expect(args).not.toContain("--ro-bind-try");
    // Offline, nothing else differs; online without a resolv.conf target, only --unshare-net goes.
    expect(
      online.filter(
        (a, i) => a !== "--ro-bind-try" && online[i - 1] !== "--ro-bind-try" && online[i - 2] !== "--ro-bind-try",
      ),
    ).toEqual(args.filter((a) => a !== "--unshare-net"));
    expect(bwrapArguments(spec({ view: { ...VIEW, resolvConfTarget: null }, network: "host" }))).toEqual(
      args.filter((a) => a !== "--unshare-net"),
    );
  });

  it("started in a network namespace made for it (not root, --network): keeps it, drops every capability, maps to the daemon's ids", () => {
    const own = spec({ insideId: null, network: "user" });
    const given = bwrapArguments({ ...own, givenNamespace: { uid: 1000, gid: 1001 } });
    // bwrap is root of the namespace it starts in: it must pass on no capability.
    expect(valuesOf(given, "--cap-drop")).toEqual([["ALL"]]);
    expect(valuesOf(given, "--uid")).toEqual([["1000"]]);
    expect(valuesOf(given, "--gid")).toEqual([["1001"]]);
    // Its own user namespace, without further ones, nested as always.
    for (const flag of ["--unshare-user", "--disable-userns", "--unshare-pid", "--die-with-parent"]) {
      expect(given, flag).toContain(flag);
    }
    expect(given).not.toContain("--unshare-net");
    // Nothing else differs from a daemon that is not root and makes the network namespace with bwrap.
    const plain = bwrapArguments(own);
    expect(plain).toContain("--unshare-net");
    const at = given.indexOf("--cap-drop");
    expect(given.filter((_, i) => i < at || i > at + 5)).toEqual(plain.filter((a) => a !== "--unshare-net"));
    expect(bwrapArguments({ ...own, givenNamespace: null })).toEqual(plain);
  });

  it("shows the host's system read-only, hides /etc's unreadable entries, and has no /sys", () => {
    const binds = valuesOf(args, "--ro-bind", 2);
    expect(binds).toContainEqual(["/usr", "/usr"]);
    expect(binds).toContainEqual(["/lib64", "/lib64"]);
    expect(binds).toContainEqual(["/etc", "/etc"]);
    expect(valuesOf(args, "--symlink", 2)).toContainEqual(["usr/bin", "/bin"]);
    expect(binds).toContainEqual(["/dev/null", "/etc/shadow"]);
    expect(valuesOf(args, "--tmpfs")).toContainEqual(["/etc/ssl/private"]);
    expect(valuesOf(args, "--remount-ro")).toContainEqual(["/etc/ssl/private"]);
    expect(args.some((a) => a === "/sys" || a.startsWith("/sys/"))).toBe(false);
  });

  it("gives a /proc of its own whose kernel settings are read-only, and covers sysrq-trigger", () => {
    expect(valuesOf(args, "--proc")).toEqual([["/proc"]]);
    const binds = valuesOf(args, "--ro-bind", 2);
    expect(binds).toContainEqual(["/proc/sys", "/proc/sys"]);
    expect(binds).toContainEqual(["/dev/null", "/proc/sysrq-trigger"]);
    // Mounted after /proc, or it would be covered.
    expect(args.indexOf("/proc/sys")).toBeGreaterThan(args.indexOf("--proc"));
    expect(bwrapArguments(spec({ view: { ...VIEW, sysrqTrigger: false } }))).not.toContain("/proc/sysrq-trigger");
  });

  it("has private /tmp and /var/tmp, a minimal /dev, the workspace, and a read-only root last", () => {
    expect(valuesOf(args, "--tmpfs")).toEqual(expect.arrayContaining([["/tmp"], ["/var/tmp"]]));
    expect(valuesOf(args, "--dev")).toEqual([["/dev"]]);
    expect(valuesOf(args, "--bind", 2)).toEqual([["/dev/shm/abc", "/workspace"]]);
    expect(valuesOf(args, "--chdir")).toEqual([["/workspace/src"]]);
    expect(args.slice(-2)).toEqual(["--remount-ro", "/"]);
    const byFd = bwrapArguments(spec({ workspace: { fd: 6 } }));
    expect(valuesOf(byFd, "--bind-fd", 2)).toEqual([["6", "/workspace"]]);
    expect(byFd).not.toContain("--bind");
  });

  it("sets the command's environment inside only, each variable", () => {
    const sets = valuesOf(args, "--setenv", 2);
    expect(sets).toEqual([
      ["PATH", "/usr/bin:/bin"],
      ["LD_PRELOAD", "/workspace/evil.so"],
      ["BASH_ENV", "/workspace/x"],
    ]);
  });

  it("loads the syscall filter, reports its status and says when it is set up, on the given descriptors", () => {
    expect(valuesOf(args, "--seccomp")).toEqual([["5"]]);
    expect(valuesOf(args, "--json-status-fd")).toEqual([["4"]]);
    expect(valuesOf(args, "--block-fd")).toEqual([["7"]]);
    const bare = bwrapArguments(spec({ fds: { seccomp: null, status: null, setup: null } }));
    expect(bare).not.toContain("--seccomp");
    expect(bare).not.toContain("--json-status-fd");
    expect(bare).not.toContain("--block-fd");
  });

  it("refuses a NUL byte anywhere: options travel NUL-separated, one would make options of its own", () => {
    expect(() => bwrapArguments(spec({ env: { X: "a\0--bind\0/\0/host" } }))).toThrow(/NUL/);
    expect(() => bwrapArguments(spec({ cwd: "/workspace/a\0b" }))).toThrow(/NUL/);
  });

  it("is pure: the same spec, the same options", () => {
    expect(bwrapArguments(spec())).toEqual(args);
  });
});

describe("how the options reach bwrap", () => {
  it("through a pipe, NUL-terminated, with nothing but --args and the command on bwrap's command line", () => {
    expect(encodeArguments(["--a", "b c"]).toString()).toBe("--a\0b c\0");
    expect(bwrapCommandLine(3, ["sh", "-c", "echo hi"])).toEqual(["--args", "3", "--", "sh", "-c", "echo hi"]);
  });
});

describe("bwrap's options for a sandbox made from an image", () => {
  it("binds its own root at /, writable, and the host's /usr only where the init's loader is read from", () => {
    const args = bwrapArguments(spec({ root: { path: "/dev/shm/root" }, network: "host" }));
    expect(valuesOf(args, "--bind", 2)).toContainEqual(["/dev/shm/root", "/"]);
    // First of the mounts: everything else is mounted inside it.
    expect(args.indexOf("--bind")).toBeLessThan(args.indexOf("--proc"));
    expect(valuesOf(args, "--ro-bind", 2)).toContainEqual(["/usr", "/run/sbx-host/usr"]);
    expect(valuesOf(args, "--ro-bind", 2)).not.toContainEqual(["/usr", "/usr"]);
    expect(valuesOf(args, "--ro-bind", 2)).not.toContainEqual(["/etc", "/etc"]);
    expect(valuesOf(args, "--symlink", 2)).toEqual([]);
    expect(valuesOf(args, "--remount-ro")).not.toContainEqual(["/"]);
    expect(valuesOf(args, "--ro-bind-try", 2)).toEqual([["/etc/resolv.conf", "/etc/resolv.conf"]]);
  });

  it("keeps the host's root read-only without one", () => {
    const args = bwrapArguments(spec());
    expect(valuesOf(args, "--remount-ro").at(-1)).toEqual(["/"]);
    expect(valuesOf(args, "--ro-bind", 2)).toContainEqual(["/usr", "/usr"]);
  });
});
