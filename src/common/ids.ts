// Ids a person can type (docs/protocol.md, "Ids"): a type prefix (rcp_, exe_, prc_,
// sbx_) and 16 random characters of a lower-case Crockford base32 alphabet (no i, l,
// o, u: nothing to confuse with 1 or 0). The random characters lead, so the first 8
// (40 bits) tell ids apart: that is the short form, shown where a table is narrow and
// accepted wherever an id is. Whoever makes ids (the receipt store, the daemon) draws
// again when a new id's short form is already taken, so it names one id in its store.
// Time order is kept by the store (created_at), not in the id. Ids made before this
// format (rcp_ + time, exe_ + hex) keep working; they have no short form.

export const ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
/** Random characters after the type prefix: 80 bits. */
export const ID_RANDOM_CHARS = 16;
/** Characters after the type prefix that make the short form: 40 bits. */
export const SHORT_ID_CHARS = 8;

export type IdPrefix = "rcp" | "exe" | "prc" | "sbx";

const FORMAT = new RegExp(`^(rcp|exe|prc|sbx)_[${ID_ALPHABET}]{${ID_RANDOM_CHARS}}$`);

/** Random bytes: the caller's source (platform/random.ts; common imports nothing of sbx). */
export type RandomBytes = (n: number) => Buffer;

/** A new id: `rcp_` and 16 random characters of ID_ALPHABET, drawn from `random`. */
export function newId(prefix: IdPrefix, random: RandomBytes): string {
  const bytes = random((ID_RANDOM_CHARS * 5) / 8);
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ID_ALPHABET[(value >> bits) & 31];
    }
    value &= (1 << bits) - 1;
  }
  return `${prefix}_${out}`;
}

/** True for an id of this format (one that has a short form). */
export function hasShortForm(id: string): boolean {
  return FORMAT.test(id);
}

const EARLIER_FORMAT = /^(?:(?:exe|prc|sbx)_[0-9a-f]{20}|rcp_[0-9a-z]{21})$/;

/** True for a whole id, of this format or an earlier one: it needs no prefix search. */
export function isWholeId(id: string): boolean {
  return FORMAT.test(id) || EARLIER_FORMAT.test(id);
}

/** The short form (`rcp_` and 8 characters) of an id of this format; any other id whole. */
export function shortId(id: string): string {
  return hasShortForm(id) ? id.slice(0, id.indexOf("_") + 1 + SHORT_ID_CHARS) : id;
}

/**
 * The bounds of a prefix search on an indexed text column: every string that starts
 * with `prefix` is >= lo and < hi (BINARY collation compares UTF-8 bytes; U+FFFF
 * sorts after every character an id or a key may hold).
 */
export function prefixRange(prefix: string): { lo: string; hi: string } {
  return { lo: prefix, hi: `${prefix}\uffff` };
}

/**
 * A new id whose short form `isTaken` does not know: drawn again while it is (at 40
 * bits, about once in 10 million draws in a store of 100,000).
 */
export function newUniqueId(prefix: IdPrefix, isTaken: (short: string) => boolean, random: RandomBytes): string {
  for (let draw = 0; draw < 1000; draw++) {
    const id = newId(prefix, random);
    if (!isTaken(shortId(id))) return id;
  }
  throw new Error(`no free ${prefix}_ id after 1000 draws: the random source repeats`);
}
