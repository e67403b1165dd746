// Which runtime runs sbx: Node (bin/sbx) or Bun (the release binary). The seams in
// src/platform branch on this; nothing else does.

export function isBunRuntime(): boolean {
  return typeof (process.versions as Record<string, string | undefined>).bun === "string";
}

/**
 * Whether this is the Bun-compiled release binary (its entry lives in Bun's embedded
 * file system, /$bunfs), not sources run by Bun. Told by the process's script, never by
 * `import.meta.url`, which depends on how the binary was bundled (as CommonJS, Bun
 * replaced it with the path the source had on the machine that built it).
 */
export function isCompiledBinary(): boolean {
  const script = process.argv[1];
  return isBunRuntime() && (script === undefined || script.startsWith("/$bunfs"));
}
