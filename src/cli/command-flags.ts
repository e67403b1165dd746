// The flags that describe a command to run, shared by exec and process start:
// ARGV or --shell, --cwd, --env K=V (repeatable), --env-file F, --idempotency-key.

import fs from "node:fs";
import { isValidEnvName, isValidIdempotencyKey, isValidSandboxRef, resolveWorkingDir } from "../protocol/validate.js";
import { UsageError } from "../common/errors.js";
import type { Context } from "./context.js";
import { fileErrorWords } from "../common/file-errors.js";
import { randomUUID } from "../platform/random.js";

/** Parses `K=V` lines of an env file: blank lines and # comments are skipped. */
export function parseEnvFile(text: string, file: string): Record<string, string> {
  const env: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, i) => {
    const t = line.trim();
    if (t === "" || t.startsWith("#")) return;
    const [k, v] = splitAssignment(t.replace(/^export\s+/, ""), `${file}:${i + 1}`);
    env[k] = v.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
  });
  return env;
}

function splitAssignment(text: string, where: string): [string, string] {
  const eq = text.indexOf("=");
  if (eq <= 0) throw new UsageError(`${where}: expected K=V, got ${JSON.stringify(text)}`);
  const k = text.slice(0, eq);
  if (!isValidEnvName(k)) throw new UsageError(`${where}: invalid variable name ${JSON.stringify(k)}`);
  return [k, text.slice(eq + 1)];
}

/** The environment the flags ask for: the file first, then --env entries over it. */
export function envFromFlags(pairs: string[] | undefined, envFile: string | undefined): Record<string, string> {
  let env: Record<string, string> = {};
  if (envFile !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(envFile, "utf8");
    } catch (err) {
      throw new UsageError(`--env-file ${envFile}: ${fileErrorWords(err)}`);
    }
    env = parseEnvFile(text, envFile);
  }
  for (const kv of pairs ?? []) {
    const [k, v] = splitAssignment(kv, "--env");
    env[k] = v;
  }
  return env;
}

/** The command: argv (no shell) or a shell string, never both, never neither. */
export function commandFromFlags(argv: string[], shell: string | undefined, usage: string): string[] | string {
  if (argv.length > 0 && shell !== undefined) {
    throw new UsageError("give either a command after -- or --shell STRING, not both");
  }
  if (argv.length === 0 && (shell === undefined || shell.trim() === ""))
    throw new UsageError("no command given", usage);
  return shell ?? argv;
}

/** --cwd as an absolute path inside /workspace, or undefined; an escape is refused. */
export function workingDirFromFlag(cwd: string | undefined): string | undefined {
  if (cwd === undefined) return undefined;
  const resolved = resolveWorkingDir(cwd);
  if (resolved === null) throw new UsageError(`--cwd ${JSON.stringify(cwd)} escapes /workspace`);
  return resolved;
}

/** The given Idempotency-Key, checked, or a fresh random one. */
export function idempotencyKeyFromFlag(key: string | undefined): string {
  const chosen = key ?? `sbx-${randomUUID()}`;
  if (!isValidIdempotencyKey(chosen)) {
    throw new UsageError("--idempotency-key must be 1-255 characters of A-Z a-z 0-9 _ : . -");
  }
  return chosen;
}

/** The sandbox a command works in: -s, else the `sandbox` setting, else `default` (every verb alike). */
export function chooseSandbox(flag: string | undefined, setting: string | undefined): string {
  return checkSandboxRef(flag ?? setting ?? "default");
}

/** chooseSandbox with the setting read from the config file (only when -s is absent). */
export function sandboxFor(ctx: Pick<Context, "config">, flag: string | undefined): string {
  return chooseSandbox(flag, flag === undefined ? ctx.config.read().settings.sandbox : undefined);
}

/** A sandbox id or name from a flag or an argument; 125 otherwise. */
export function checkSandboxRef(ref: string): string {
  if (!isValidSandboxRef(ref)) {
    throw new UsageError(`invalid sandbox ${JSON.stringify(ref)}: use a sandbox id or name (letters, digits, _ . -)`);
  }
  return ref;
}
