// The store's own signing key (Ed25519, node:crypto): made on first use, private to
// its user (0600), next to the receipt store. Bundles carry its public half
// (docs/receipt-bundle.md); `sbx receipts key` shows it.

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LocalStateError, UsageError } from "../common/errors.js";
import { ExitCodes } from "../common/exit-codes.js";

export interface SigningKey {
  file: string;
  privateKey: crypto.KeyObject;
  /** The raw 32 bytes of the public key. */
  publicRaw: Buffer;
}

/** A key file sbx will not use: another user's, or one others may read. */
export class UnsafeSigningKey extends LocalStateError {
  constructor(file: string, reason: string) {
    super(
      "unsafe_signing_key",
      `refusing the signing key ${file}: ${reason}`,
      ExitCodes.storeUnusable,
      "it must be yours and readable by you alone (chmod 600); or move it away to make a new key",
    );
    this.name = "UnsafeSigningKey";
  }
}

/** The raw public key of a key object. */
export function rawPublicKey(key: crypto.KeyObject): Buffer {
  const jwk = crypto.createPublicKey(key).export({ format: "jwk" });
  return Buffer.from(String(jwk.x), "base64url");
}

export function publicKeyObject(raw: Buffer): crypto.KeyObject {
  return crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
}

/** As ssh-keygen prints one: SHA256:base64 of the raw key's digest, without padding. */
export function fingerprint(raw: Buffer): string {
  return `SHA256:${crypto.createHash("sha256").update(raw).digest("base64").replace(/=+$/, "")}`;
}

/** The public key as `sbx receipts key` prints it and --key takes it: base64 of its 32 bytes. */
export function publicKeyText(raw: Buffer): string {
  return raw.toString("base64");
}

/** The public key as PEM (SubjectPublicKeyInfo), for openssl. */
export function publicKeyPem(raw: Buffer): string {
  return publicKeyObject(raw).export({ format: "pem", type: "spki" }).toString();
}

/** Strict base64: decodes to exactly `length` bytes and encodes back to the same text. */
export function strictBase64(text: string, length: number): Buffer | null {
  const bytes = Buffer.from(text, "base64");
  return bytes.length === length && bytes.toString("base64") === text ? bytes : null;
}

/**
 * A public key given on the command line: base64 of its 32 bytes (what `sbx receipts
 * key` prints), a PEM public key, or a file holding either.
 */
export function parsePublicKey(given: string): Buffer {
  let text = given.trim();
  const fromFile = !/^[A-Za-z0-9+/=]{44}$/.test(text) && !text.startsWith("-----") && fs.existsSync(given);
  if (fromFile) text = fs.readFileSync(given, "utf8").trim();
  const raw = strictBase64(text, 32);
  if (raw) return raw;
  if (text.startsWith("-----BEGIN PUBLIC KEY-----")) {
    try {
      const key = crypto.createPublicKey(text);
      if (key.asymmetricKeyType === "ed25519") return rawPublicKey(key);
    } catch {
      // said below
    }
  }
  throw new UsageError(
    `--key ${JSON.stringify(given)}: not an Ed25519 public key${fromFile ? " (read from that file)" : ""}`,
    "give what `sbx receipts key` prints on the machine that made the bundle (or its --pem), or a file holding it",
  );
}

function checkPrivate(file: string): void {
  const st = fs.statSync(file);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw new UnsafeSigningKey(file, `it belongs to uid ${st.uid}`);
  if ((st.mode & 0o077) !== 0) {
    throw new UnsafeSigningKey(file, `others may read or write it (mode ${(st.mode & 0o777).toString(8)})`);
  }
}

function load(file: string): SigningKey {
  checkPrivate(file);
  let privateKey: crypto.KeyObject;
  try {
    privateKey = crypto.createPrivateKey(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new UnsafeSigningKey(file, `it is not a private key (${(err as Error).message})`);
  }
  if (privateKey.asymmetricKeyType !== "ed25519") throw new UnsafeSigningKey(file, "it is not an Ed25519 key");
  return { file, privateKey, publicRaw: rawPublicKey(privateKey) };
}

/**
 * The key in `file`, made there first when there is none: written whole to a private
 * temporary file and linked into place, so that two sbx processes making it at once
 * end with one key (the second reads the first's).
 */
export function loadOrCreateSigningKey(file: string): SigningKey {
  if (fs.existsSync(file)) return load(file);
  const { privateKey } = crypto.generateKeyPairSync("ed25519");
  const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${crypto.randomUUID()}`);
  const fd = fs.openSync(tmp, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600);
  try {
    fs.writeSync(fd, pem);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return load(file);
}
