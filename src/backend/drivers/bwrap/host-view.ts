// The mount layout's facts about this host (docs/drivers.md, "What it sees"): which
// top-level system names are directories or links into /usr, which /etc entries an
// unprivileged user could not read (hidden inside), where /etc/resolv.conf really is.
// Read once when the driver is probed; the argument builder (args.ts) turns them into
// bwrap options without looking at the host itself.

import fs from "node:fs";
import path from "node:path";

/** Top-level names that are directories or (merged /usr) links to them. */
export const SYSTEM_NAMES = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
/** Bounds the walk of /etc for entries to hide. */
const ETC_WALK_LIMIT = 50_000;

export type SystemEntry = { kind: "dir"; path: string } | { kind: "link"; path: string; target: string };

export interface HostView {
  /** /bin, /lib…: read-only directories, or the links they are (e.g. /bin -> usr/bin). */
  system: SystemEntry[];
  /** Where /etc is read from (the host's /etc; a test's directory). */
  etcDir: string;
  /** Entries under /etc to hide (as paths inside): directories get an empty tmpfs, files /dev/null. */
  hiddenEtc: Array<{ inside: string; dir: boolean }>;
  /** /etc/resolv.conf's real path when it lies outside /etc and /usr (e.g. in /run), for the host's network. */
  resolvConfTarget: string | null;
  /** Whether the host has /proc/sysrq-trigger (then it is covered inside). */
  sysrqTrigger: boolean;
}

/** Reads the facts the mount layout needs from this host. */
export function readHostView(etcDir = "/etc", root = "/"): HostView {
  const system: SystemEntry[] = [];
  for (const name of SYSTEM_NAMES) {
    const host = path.join(root, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(host);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) system.push({ kind: "link", path: `/${name}`, target: fs.readlinkSync(host) });
    else if (st.isDirectory()) system.push({ kind: "dir", path: `/${name}` });
  }
  return {
    system,
    etcDir,
    hiddenEtc: unreadableEntries(etcDir).map((e) => ({
      inside: path.posix.join("/etc", path.relative(etcDir, e.path)),
      dir: e.dir,
    })),
    resolvConfTarget: resolvConfTarget(path.join(etcDir, "resolv.conf")),
    sysrqTrigger: fs.existsSync("/proc/sysrq-trigger"),
  };
}

/**
 * Files and directories under `dir` that a user other than their owner and group
 * could not read (e.g. /etc/shadow, /etc/ssl/private). Hidden inside whatever the
 * command's identity: under a daemon that is not root a command maps to the daemon's
 * own uid, and permissions alone would not hide the daemon user's files.
 */
export function unreadableEntries(dir: string): Array<{ path: string; dir: boolean }> {
  const out: Array<{ path: string; dir: boolean }> = [];
  let seen = 0;
  const walk = (d: string) => {
    let names: string[];
    try {
      names = fs.readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      if (++seen > ETC_WALK_LIMIT) return;
      const p = path.join(d, name);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(p);
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) continue;
      if (st.isDirectory()) {
        if ((st.mode & 0o005) !== 0o005) out.push({ path: p, dir: true });
        else walk(p);
      } else if ((st.mode & 0o004) === 0) {
        out.push({ path: p, dir: false });
      }
    }
  };
  walk(dir);
  return out;
}

/** With the host's network, /etc/resolv.conf may link outside /etc (e.g. into /run): its target is bound too. */
function resolvConfTarget(file: string): string | null {
  try {
    const target = fs.realpathSync(file);
    return target.startsWith("/etc/") || target.startsWith("/usr/") ? null : target;
  } catch {
    return null;
  }
}
