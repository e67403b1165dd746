// Errors of naming a receipt. Apart from the store so that the CLI can recognise
// them (src/cli/main.ts) without loading the store and its SQLite driver at start-up.

export class ReceiptNotFound extends Error {
  constructor(readonly ref: string) {
    super(`no receipt matches ${JSON.stringify(ref)}`);
  }
}

export class AmbiguousReceipt extends Error {
  constructor(
    readonly ref: string,
    readonly candidates: string[],
  ) {
    super(`${JSON.stringify(ref)} matches ${candidates.length} receipts: ${candidates.slice(0, 5).join(", ")}`);
  }
}
