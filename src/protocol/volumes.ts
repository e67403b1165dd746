// Named volumes on the wire (docs/operations.md, "Named volumes"): what a volume's name
// and a mount's path inside a sandbox may be, and `--volume NAME:/path[:ro]` read into a
// mount. Pure: the CLI checks with it before sending, the backend again on receipt.
//
// A name is one path segment of letters, digits, `_`, `.` and `-` (never `.` or `..`),
// so the volume's host directory (<data dir>/volumes/<name>) can be nothing else. A mount
// path is absolute and normal (no `.`, `..` or `//` segments) and stays out of what the
// sandbox's own layout owns: `/` itself, `/workspace` and below (the sandbox's own
// workspace: a volume never stands in for it or inside it), the kernel's and the
// system's directories (`/proc`, `/sys`, `/dev`, `/usr`, `/etc`, …) and the private
// tmpfs (`/tmp`, `/var/tmp`, `/run`).

export const VOLUME_NAME_PATTERN = "^[a-z0-9][a-z0-9_.-]{0,62}$";
const VOLUME_NAME = new RegExp(VOLUME_NAME_PATTERN);

/** The first segments a mount path may not start with. */
export const RESERVED_MOUNT_ROOTS = [
  "workspace",
  "proc",
  "sys",
  "dev",
  "usr",
  "etc",
  "bin",
  "sbin",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "tmp",
  "run",
  "var",
  "boot",
] as const;

export interface VolumeMountRequest {
  name: string;
  path: string;
  read_only?: boolean;
}

/** Why `name` cannot name a volume, or null. */
export function volumeNameProblem(name: unknown): string | null {
  if (typeof name !== "string" || !VOLUME_NAME.test(name) || name === "." || name === "..") {
    return `a volume name is 1-63 characters of a-z 0-9 _ . - starting with a letter or digit (got ${JSON.stringify(name)})`;
  }
  return null;
}

/** Why `p` cannot be where a volume is mounted inside a sandbox, or null. */
export function mountPathProblem(p: unknown): string | null {
  if (typeof p !== "string" || !p.startsWith("/") || p.length > 1024) {
    return `a volume's path inside the sandbox is an absolute path (got ${JSON.stringify(p)})`;
  }
  const segments = p.split("/").slice(1);
  if (segments.some((s) => s === "" || s === "." || s === ".." || s.includes("\0"))) {
    return `${JSON.stringify(p)} is not a normal path (no empty, . or .. segments)`;
  }
  const first = segments[0]!;
  if ((RESERVED_MOUNT_ROOTS as readonly string[]).includes(first)) {
    return `a volume cannot be mounted at ${p}: /${first} is the sandbox's own (mount it elsewhere, e.g. /cache or /data)`;
  }
  return null;
}

/** Why a list of mounts cannot be had, or null: each checked, no path twice. */
export function mountsProblem(mounts: unknown): { index: number; message: string } | null {
  if (!Array.isArray(mounts)) return { index: -1, message: "volumes must be an array" };
  const seen = new Set<string>();
  for (const [index, m] of mounts.entries()) {
    if (typeof m !== "object" || m === null || Array.isArray(m)) return { index, message: "a mount is an object" };
    const extra = Object.keys(m).find((k) => !["name", "path", "read_only"].includes(k));
    if (extra !== undefined) return { index, message: `unknown field ${extra}` };
    const mount = m as Record<string, unknown>;
    const problem = volumeNameProblem(mount.name) ?? mountPathProblem(mount.path);
    if (problem !== null) return { index, message: problem };
    if (mount.read_only !== undefined && typeof mount.read_only !== "boolean") {
      return { index, message: "read_only must be a boolean" };
    }
    const at = mount.path as string;
    for (const other of seen) {
      if (at === other || at.startsWith(`${other}/`) || other.startsWith(`${at}/`)) {
        return { index, message: `${at} overlaps the mount at ${other}` };
      }
    }
    seen.add(at);
  }
  return null;
}

/** `NAME:/path[:ro]` (the CLI's --volume) as a mount; throws saying what is wrong. */
export function parseVolumeFlag(text: string): VolumeMountRequest {
  const parts = text.split(":");
  const [name, p, mode] = parts;
  if (parts.length < 2 || parts.length > 3 || (mode !== undefined && mode !== "ro" && mode !== "rw")) {
    throw new Error(`--volume takes NAME:/path or NAME:/path:ro (got ${JSON.stringify(text)})`);
  }
  const problem = volumeNameProblem(name) ?? mountPathProblem(p);
  if (problem !== null) throw new Error(`--volume ${text}: ${problem}`);
  return { name: name!, path: p!, ...(mode === "ro" && { read_only: true }) };
}
