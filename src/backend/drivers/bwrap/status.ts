// What bwrap reports on `--json-status-fd` (bubblewrap(1)): one JSON document per line,
// `{"child-pid": N, …}` once the sandbox's init exists, and `{"exit-code": N}` when it
// ends — written only when the command was executed (bwrap tells an exec that
// happened from a setup or execvp that failed). No exit-code: the command never ran.

export interface BwrapStatus {
  /** The sandbox init's pid on the host, once reported. */
  childPid: number | null;
  /** The command's exit status as bwrap saw it; null: the command was never executed. */
  exitCode: number | null;
}

export function parseStatus(text: string): BwrapStatus {
  const status: BwrapStatus = { childPid: null, exitCode: null };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof doc !== "object" || doc === null) continue;
    const { "child-pid": childPid, "exit-code": exitCode } = doc as Record<string, unknown>;
    if (typeof childPid === "number" && Number.isInteger(childPid)) status.childPid = childPid;
    if (typeof exitCode === "number" && Number.isInteger(exitCode)) status.exitCode = exitCode;
  }
  return status;
}
