// --env K=V (repeatable) and --env-file F, shared by exec and process start.

import fs from "node:fs";
import { isValidEnvName } from "../protocol/validate.js";
import { UsageError } from "./errors.js";

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
      throw new UsageError(`--env-file ${envFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    env = parseEnvFile(text, envFile);
  }
  for (const kv of pairs ?? []) {
    const [k, v] = splitAssignment(kv, "--env");
    env[k] = v;
  }
  return env;
}
