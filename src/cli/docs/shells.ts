// The shells sbx generates completions for (kept apart so `sbx completion` can
// check its argument without loading the generator).

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];
