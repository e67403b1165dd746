// Finding programs: bwrap itself on the backend's PATH, and a command's argv[0]
// through the sandbox's view of the host before bwrap starts, so that "command not
// found" is still a shell's 127 (docs/drivers.md, "Missing programs").

import fs from "node:fs";
import path from "node:path";
import { WORKSPACE } from "../../../protocol/types.js";
import { SYSTEM_NAMES } from "./host-view.js";

/** Top-level directories a sandbox has that are not the host's (their content cannot be told from outside). */
const SANDBOX_OWN = ["tmp", "var", "proc", "dev"];

/**
 * Why the program cannot be started in the sandbox (ENOENT, EACCES; EISDIR for a path
 * that names a directory, as a shell says it), judged on the
 * host through the sandbox's view, or null when it can or when that cannot be told
 * (then bwrap tries, and the run's status says it never started).
 */
export function missingProgram(
  program: string,
  searchPath: string,
  cwd: string,
  workspaceDir: string,
): "ENOENT" | "EACCES" | "EISDIR" | null {
  const candidates: string[] = [];
  if (program.includes("/")) {
    candidates.push(path.posix.resolve(cwd, program));
  } else {
    for (const dir of searchPath.split(":")) {
      if (dir !== "") candidates.push(path.posix.join(path.posix.resolve(cwd, dir), program));
    }
  }
  let sawNotExecutable = false;
  for (const inside of candidates) {
    const host = hostPathOf(inside, workspaceDir);
    if (host === undefined) return null;
    if (host === null) continue;
    let st: fs.Stats;
    try {
      st = fs.statSync(host);
    } catch {
      continue;
    }
    if (st.isFile() && (st.mode & 0o111) !== 0) return null;
    if (program.includes("/") && st.isDirectory()) return "EISDIR";
    sawNotExecutable = true;
  }
  return sawNotExecutable ? "EACCES" : "ENOENT";
}

/**
 * The host path behind a path inside the sandbox; null when the sandbox has no such
 * path, undefined when it cannot be told from the host (e.g. under /tmp).
 */
function hostPathOf(inside: string, workspaceDir: string): string | null | undefined {
  if (inside === WORKSPACE || inside.startsWith(`${WORKSPACE}/`))
    return path.join(workspaceDir, inside.slice(WORKSPACE.length));
  const top = inside.split("/")[1] ?? "";
  if (top === "usr" || top === "etc" || SYSTEM_NAMES.includes(top)) return inside;
  return SANDBOX_OWN.includes(top) ? undefined : null;
}

/** A program on the backend's PATH, or null. */
export function findOnPath(program: string, searchPath: string): string | null {
  for (const dir of searchPath.split(":")) {
    if (dir === "") continue;
    const candidate = path.join(dir, program);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
