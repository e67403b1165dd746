// Counted nouns in what sbx says: "1 entry", "2 entries", "1 process".

/** `n` and the noun, singular for one: counted(1, "entry", "entries") → "1 entry". */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
