// Which runtime runs sbx: Node (bin/sbx) or Bun (the release binary). The seams in
// src/platform branch on this; nothing else does.

export function isBunRuntime(): boolean {
  return typeof (process.versions as Record<string, string | undefined>).bun === "string";
}
