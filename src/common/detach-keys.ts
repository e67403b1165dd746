// The detach sequence of an attached terminal (sbx shell, exec -it, attach): typed in
// order, it leaves the program running and sbx returns. Written as docker writes it
// (`--detach-keys`, the `detach_keys` setting): comma-separated keys, each a single
// character or ctrl-X (X one of a-z @ [ \ ] ^ _). Default: ctrl-p,ctrl-q, as docker's.

export const DEFAULT_DETACH_KEYS = "ctrl-p,ctrl-q";

/** The bytes of a detach sequence, or why it is not one. */
export function parseDetachKeys(spec: string): { bytes: Buffer } | { problem: string } {
  const keys = spec.split(",").map((k) => k.trim());
  const bytes: number[] = [];
  for (const key of keys) {
    const ctrl = /^ctrl-(.)$/i.exec(key);
    if (ctrl) {
      const c = ctrl[1]!.toLowerCase();
      if (c >= "a" && c <= "z") bytes.push(c.charCodeAt(0) - 96);
      else if ("@[\\]^_".includes(c)) bytes.push(c.charCodeAt(0) - 64);
      else return { problem: `${JSON.stringify(key)}: ctrl- takes a letter or one of @ [ \\ ] ^ _` };
    } else if (key.length === 1 && key.charCodeAt(0) >= 0x20 && key.charCodeAt(0) < 0x7f) {
      bytes.push(key.charCodeAt(0));
    } else {
      return { problem: `${JSON.stringify(key)} is not a key: use a character or ctrl-X, e.g. ctrl-p,ctrl-q` };
    }
  }
  return { bytes: Buffer.from(bytes) };
}

/** A key sequence shown as a person types it: "Ctrl-P Ctrl-Q". */
export function describeDetachKeys(bytes: Buffer): string {
  return [...bytes]
    .map((b) => (b < 0x20 ? `Ctrl-${String.fromCharCode(b + 64)}` : b === 0x7f ? "Ctrl-?" : String.fromCharCode(b)))
    .join(" ");
}

/**
 * Watches typed bytes for the sequence. Bytes that might begin it are held back until
 * the next key tells; everything else is passed on in order, unchanged.
 */
export class DetachScanner {
  private held = 0;

  constructor(private readonly sequence: Buffer) {}

  /** What to send on, and whether the sequence was completed (then `forward` is what came before it). */
  scan(input: Buffer): { forward: Buffer; detach: boolean } {
    if (this.sequence.length === 0) return { forward: input, detach: false };
    const out: number[] = [];
    for (const byte of input) {
      if (byte === this.sequence[this.held]) {
        this.held++;
        if (this.held === this.sequence.length) {
          this.held = 0;
          return { forward: Buffer.from(out), detach: true };
        }
        continue;
      }
      // Not the sequence after all: what was held goes on, then this byte is looked at afresh.
      for (let i = 0; i < this.held; i++) out.push(this.sequence[i]!);
      this.held = 0;
      if (byte === this.sequence[0]) this.held = 1;
      else out.push(byte);
      if (this.held === this.sequence.length) {
        this.held = 0;
        return { forward: Buffer.from(out), detach: true };
      }
    }
    return { forward: Buffer.from(out), detach: false };
  }
}
