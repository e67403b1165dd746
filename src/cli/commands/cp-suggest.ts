// `sbx cp f.txt ci` with the colon forgotten: when neither side names a sandbox but
// one of them is the name (or id) of a sandbox that exists, the refusal suggests the
// command meant (`sbx cp f.txt ci:`). Asked of the backend only once the command is
// already refused; a backend that cannot be asked just leaves the suggestion out.

import { UsageError } from "../../common/errors.js";
import type { Context } from "../context.js";
import { formatCommand } from "../render/receipt.js";

const GENERAL_HINT = "e.g. sbx cp ./src build:/workspace/src, or sbx cp build:/workspace/out.txt .";

/** Neither SOURCE nor DESTINATION names a sandbox. */
export class NoSandboxSide extends UsageError {
  constructor(readonly args: readonly [string, string]) {
    super("one side must be SANDBOX:PATH", GENERAL_HINT);
    this.name = "NoSandboxSide";
  }
}

/** Runs `parse`; a NoSandboxSide it throws comes back with the sandbox it probably meant. */
export async function suggestingSandbox<T>(ctx: Context, parse: () => T): Promise<T> {
  try {
    return parse();
  } catch (err) {
    if (!(err instanceof NoSandboxSide)) throw err;
    const meant = await sandboxMeant(ctx, err.args).catch(() => null);
    if (meant === null) throw err;
    const args = err.args.map((a, i) => (i === meant.index ? `${a}:` : a));
    throw new UsageError(err.message, `sandbox ${meant.name} exists: did you mean \`sbx cp ${formatCommand(args)}\`?`);
  }
}

async function sandboxMeant(
  ctx: Context,
  args: readonly [string, string],
): Promise<{ index: number; name: string } | null> {
  const sandboxes = await (await ctx.api()).listSandboxes();
  for (const [index, arg] of args.entries()) {
    const hit = sandboxes.find((s) => s.name === arg || s.sandbox_id === arg);
    if (hit) return { index, name: hit.name };
  }
  return null;
}
