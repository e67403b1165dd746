// How to run this same sbx again (to start the daemon in the background). On Node
// that is `node bin/sbx`; a Bun-compiled single binary is just its own executable.

export function selfInvocation(): { command: string; args: string[] } {
  const script = process.argv[1];
  const compiled = "Bun" in globalThis && (script === undefined || script.startsWith("/$bunfs"));
  if (compiled || script === undefined) return { command: process.execPath, args: [] };
  // `--`: node must not read sbx flags such as --env-file as its own.
  return { command: process.execPath, args: ["--", script] };
}
