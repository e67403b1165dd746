// Why a sandbox could not be set up, said without a host path: bwrap's own messages
// name the host's files (the gate's directory, /newroot/…, /oldroot/…), which are
// none of a sandbox user's business (docs/drivers.md, "Hostile content").

/** Inside paths a message may name; any other absolute path is the host's and is left out. */
const INSIDE = ["/workspace", "/usr", "/etc", "/proc", "/dev", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** Why a sandbox could not be set up, from bwrap's own message, in one line without a host path. */
export function startFailureCause(said: string, code: number | null, signal: NodeJS.Signals | null): string {
  const lines = said
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((l) => l.replace(/^bwrap: /, ""));
  const message = lines.join("; ");
  if (message === "") return `bwrap ended before it started the command (${signal ?? `exit ${code}`})`;
  return withoutHostPaths(message);
}

/** A message with every absolute path that is not one a sandbox has replaced by "(a host path)". */
export function withoutHostPaths(message: string): string {
  return message
    .replace(/\/(newroot|oldroot)(?=\/|\b)/g, (_m, which: string) => (which === "oldroot" ? "\0" : ""))
    .replace(/\0?(\/[^\s:;,'"]*)/g, (whole: string, p: string) => {
      if (whole.startsWith("\0")) return "(a host path)";
      const inside = p === "/" || p === "/tmp" || INSIDE.some((i) => p === i || p.startsWith(`${i}/`));
      return inside ? p : "(a host path)";
    })
    .replace(/\0/g, "");
}
