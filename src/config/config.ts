// The config file (profiles, settings) and the credentials file (API keys, 0600).
// Small JSON documents written atomically (temp file + rename); a hand-written
// module here keeps every command's start-up free of a schema library.

import { parseDetachKeys } from "../common/detach-keys.js";
import fs from "node:fs";
import path from "node:path";
import { parseDuration } from "../common/duration.js";
import { isValidSandboxRef } from "../protocol/validate.js";
import { ConfigFileError } from "../common/errors.js";
import { checkPrivateDir, ensurePrivateDir, type SbxPaths } from "./paths.js";
import { fileErrorWords } from "../common/file-errors.js";

export const LOCAL_PROFILE = "local";

export interface ProfileConfig {
  api_url: string;
  /** Added with --insecure: its key may be sent over plain http:// to a host other than loopback. */
  insecure?: boolean;
}

export interface ConfigDoc {
  version: 1;
  current_profile?: string;
  profiles: Record<string, ProfileConfig>;
  settings: Record<string, string>;
}

interface CredentialsDoc {
  version: 1;
  api_keys: Record<string, string>;
}

/** Settings `sbx config get|set` knows, with how each value is checked. */
export const SETTINGS: Record<string, { describe: string; check: (v: string) => string | null }> = {
  sandbox: {
    describe: "the sandbox every command uses without -s (default: default)",
    check: (v) => (isValidSandboxRef(v) ? null : "not a valid sandbox name"),
  },
  timeout: {
    describe: "default exec timeout, e.g. 30s or 2m (1s..10m)",
    check: (v) => {
      const ms = parseDuration(v);
      if (ms === null) return "not a duration like 30s or 2m";
      return ms >= 1000 && ms <= 600_000 ? null : "must be from 1s to 10m";
    },
  },
  detach_keys: {
    describe: "keys that detach from a terminal (shell, exec -it, attach), default ctrl-p,ctrl-q",
    check: (v) => {
      const parsed = parseDetachKeys(v);
      return "problem" in parsed ? parsed.problem : null;
    },
  },
  color: {
    describe: "auto, always or never",
    check: (v) => (["auto", "always", "never"].includes(v) ? null : "must be auto, always or never"),
  },
};

/** Reads a JSON document; `problem` says what is wrong with its shape (null: nothing). */
function readJson<T>(file: string, fallback: T, problem: (doc: unknown) => string | null): T {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return fallback;
    throw new ConfigFileError(`cannot read ${file}: ${fileErrorWords(err)}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ConfigFileError(`${file} is not valid JSON`, "fix or remove the file");
  }
  const wrong = problem(doc);
  if (wrong !== null) throw new ConfigFileError(`${file}: ${wrong}`, "fix or remove the file");
  return doc as T;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** What is wrong with a config document's shape, or null. */
function configProblem(doc: unknown): string | null {
  if (!isObject(doc)) return "not a JSON object";
  if (doc.current_profile !== undefined && typeof doc.current_profile !== "string") {
    return "current_profile is not a string";
  }
  if (doc.profiles !== undefined) {
    if (!isObject(doc.profiles)) return "profiles is not an object";
    for (const [name, p] of Object.entries(doc.profiles)) {
      if (!isObject(p) || typeof p.api_url !== "string") return `profile ${JSON.stringify(name)} has no api_url string`;
      if (p.insecure !== undefined && typeof p.insecure !== "boolean") {
        return `profile ${JSON.stringify(name)}: insecure is not true or false`;
      }
    }
  }
  if (doc.settings !== undefined) {
    if (!isObject(doc.settings)) return "settings is not an object";
    for (const [k, v] of Object.entries(doc.settings)) {
      if (typeof v !== "string") return `setting ${JSON.stringify(k)} is not a string`;
      const wrong = SETTINGS[k]?.check(v);
      if (wrong) return `setting ${JSON.stringify(k)} is ${JSON.stringify(v)}: ${wrong}`;
    }
  }
  return null;
}

function credentialsProblem(doc: unknown): string | null {
  if (!isObject(doc)) return "not a JSON object";
  if (doc.api_keys === undefined) return null;
  if (!isObject(doc.api_keys)) return "api_keys is not an object";
  for (const [name, k] of Object.entries(doc.api_keys)) {
    if (typeof k !== "string") return `the key of profile ${JSON.stringify(name)} is not a string`;
  }
  return null;
}

/** Written to a temporary file, flushed to disk, then renamed into place: a crash leaves the old file or the new one. */
function writeJsonAtomic(file: string, doc: unknown, onCreated?: (dir: string | undefined) => void): void {
  onCreated?.(ensurePrivateDir(path.dirname(file)));
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, "w", 0o600);
  try {
    fs.writeFileSync(fd, `${JSON.stringify(doc, null, 2)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

export class ConfigStore {
  /** `onCreated` hears of the directory a write created (the highest), if any. */
  constructor(
    private readonly paths: SbxPaths,
    private readonly onCreated?: (dir: string | undefined) => void,
  ) {}

  /** The config directory, when it exists, must be private: whoever writes it chooses where commands go. */
  private checkDir(): void {
    if (fs.existsSync(this.paths.configDir)) checkPrivateDir(this.paths.configDir);
  }

  read(): ConfigDoc {
    this.checkDir();
    const doc = readJson<Partial<ConfigDoc>>(this.paths.configFile, {}, configProblem);
    return {
      version: 1,
      profiles: doc.profiles ?? {},
      settings: doc.settings ?? {},
      ...(doc.current_profile === undefined ? {} : { current_profile: doc.current_profile }),
    };
  }

  write(doc: ConfigDoc): void {
    writeJsonAtomic(this.paths.configFile, doc, this.onCreated);
  }

  update(fn: (doc: ConfigDoc) => void): ConfigDoc {
    const doc = this.read();
    fn(doc);
    this.write(doc);
    return doc;
  }

  readApiKey(profile: string): string | undefined {
    return this.readCredentials().api_keys?.[profile];
  }

  /** Every stored API key (to keep all of them out of receipts). */
  allApiKeys(): string[] {
    return Object.values(this.readCredentials().api_keys ?? {});
  }

  private readCredentials(): Partial<CredentialsDoc> {
    this.checkDir();
    return readJson<Partial<CredentialsDoc>>(this.paths.credentialsFile, {}, credentialsProblem);
  }

  hasApiKey(profile: string): boolean {
    return this.readApiKey(profile) !== undefined;
  }

  setApiKey(profile: string, key: string | undefined): void {
    const doc = this.readCredentials();
    const keys = { ...(doc.api_keys ?? {}) };
    if (key === undefined) delete keys[profile];
    else keys[profile] = key;
    writeJsonAtomic(this.paths.credentialsFile, { version: 1, api_keys: keys }, this.onCreated);
  }
}
