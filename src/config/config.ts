// The config file (profiles, settings) and the credentials file (API keys, 0600).
// Small JSON documents written atomically (temp file + rename); a hand-written
// module here keeps every command's start-up free of a schema library.

import fs from "node:fs";
import path from "node:path";
import { parseDuration } from "../cli/duration.js";
import { isValidSandboxRef } from "../protocol/validate.js";
import { ConfigError } from "../cli/errors.js";
import { ensurePrivateDir, type SbxPaths } from "./paths.js";

export const LOCAL_PROFILE = "local";

export interface ProfileConfig {
  api_url: string;
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
    describe: "default sandbox for exec (default: default)",
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
  color: {
    describe: "auto, always or never",
    check: (v) => (["auto", "always", "never"].includes(v) ? null : "must be auto, always or never"),
  },
};

function readJson<T>(file: string, fallback: T): T {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return fallback;
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ConfigError(`${file} is not valid JSON`, `fix or remove the file`);
  }
}

function writeJsonAtomic(file: string, doc: unknown): void {
  ensurePrivateDir(path.dirname(file));
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

export class ConfigStore {
  constructor(private readonly paths: SbxPaths) {}

  read(): ConfigDoc {
    const doc = readJson<Partial<ConfigDoc>>(this.paths.configFile, {});
    return {
      version: 1,
      profiles: doc.profiles ?? {},
      settings: doc.settings ?? {},
      ...(doc.current_profile === undefined ? {} : { current_profile: doc.current_profile }),
    };
  }

  write(doc: ConfigDoc): void {
    writeJsonAtomic(this.paths.configFile, doc);
  }

  update(fn: (doc: ConfigDoc) => void): ConfigDoc {
    const doc = this.read();
    fn(doc);
    this.write(doc);
    return doc;
  }

  readApiKey(profile: string): string | undefined {
    return readJson<Partial<CredentialsDoc>>(this.paths.credentialsFile, {}).api_keys?.[profile];
  }

  hasApiKey(profile: string): boolean {
    return this.readApiKey(profile) !== undefined;
  }

  setApiKey(profile: string, key: string | undefined): void {
    const doc = readJson<Partial<CredentialsDoc>>(this.paths.credentialsFile, {});
    const keys = { ...(doc.api_keys ?? {}) };
    if (key === undefined) delete keys[profile];
    else keys[profile] = key;
    writeJsonAtomic(this.paths.credentialsFile, { version: 1, api_keys: keys });
  }
}
