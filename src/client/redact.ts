// Keeps API keys out of what sbx shows or stores. Never applied to what is parsed:
// with a key like "i", redacting a JSON answer before parsing it would break it.

const MARK = "[redacted]";

/**
 * Keys shorter than this cannot be told apart from ordinary text: they are kept out
 * of messages, but a command's own output is left as the command wrote it.
 */
export const OUTPUT_REDACTION_MIN_LENGTH = 8;

export function redact(text: string, secret: string | null | undefined): string {
  return secret ? text.split(secret).join(MARK) : text;
}

/** Redacts every secret from a message (`message`) or from command output (`output`, long keys only). */
export function redactSecrets(
  text: string,
  secrets: readonly string[],
  what: "message" | "output" = "message",
): string {
  let out = text;
  // Longest first, so that a key containing another is redacted whole.
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) {
    if (s === "" || (what === "output" && s.length < OUTPUT_REDACTION_MIN_LENGTH)) continue;
    out = redact(out, s);
  }
  return out;
}
