// Naming something by a unique prefix of its id (a short form such as exe_4fz2hk8d, or
// fewer characters): the one id it starts, or a refusal that names a few of those it
// matches (125, like every lookup that fails: docs/classification.md).

import { AmbiguousIdError, NotFoundError } from "../common/errors.js";
import { isWholeId } from "../common/ids.js";
import { sandboxFor } from "./command-flags.js";
import type { Context } from "./context.js";

/**
 * The id among `ids` that `ref` names: one equal to it, else the only one it is a
 * prefix of. None: `notFound()` is thrown; several: AmbiguousIdError naming them.
 */
export function pickByPrefix(ref: string, ids: readonly string[], plural: string, notFound: () => Error): string {
  if (ids.includes(ref)) return ref;
  const matches = [...new Set(ids.filter((id) => id.startsWith(ref)))];
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) throw new AmbiguousIdError(ref, plural, matches.slice(0, 5), matches.length);
  throw notFound();
}

/**
 * A sandbox named by a unique prefix of its id (sbx_4k2m) made whole, by asking the
 * backend for its sandboxes; a name or a whole id is left as it is (names never start
 * with sbx_, so anything else that does is an id).
 */
export async function wholeSandboxRef(ctx: Pick<Context, "api">, ref: string): Promise<string> {
  if (!ref.startsWith("sbx_") || isWholeId(ref)) return ref;
  const sandboxes = await (await ctx.api()).listSandboxes();
  return pickByPrefix(
    ref,
    sandboxes.map((s) => s.sandbox_id),
    "sandboxes",
    () =>
      new NotFoundError(
        `no sandbox ${JSON.stringify(ref)}`,
        "see `sbx sandbox list`; `sbx sandbox create NAME` makes one",
        "sandbox_not_found",
      ),
  );
}

/** The sandbox a command works in (-s, else the `sandbox` setting, else default), a prefix made whole. */
export async function sandboxIdFor(ctx: Pick<Context, "api" | "config">, flag: string | undefined): Promise<string> {
  return wholeSandboxRef(ctx, sandboxFor(ctx, flag));
}
