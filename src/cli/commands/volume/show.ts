// sbx volume show NAME

import { ExitCodes } from "../../../common/exit-codes.js";
import { formatSize } from "../../../common/sizes.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { printTable } from "../../render/table.js";
import { volumeDocument } from "./render.js";

export async function run(opts: { name: string; json: boolean }, ctx: Context): Promise<number> {
  const v = await (await ctx.api()).getVolume(opts.name);
  if (opts.json) {
    printJson(ctx, volumeDocument(v));
    return ExitCodes.ok;
  }
  await printTable(
    ctx.io,
    ["FIELD", "VALUE"],
    [
      ["name", v.name],
      ["created_at", v.created_at],
      ["used_by", v.used_by.length === 0 ? "no sandbox" : v.used_by.join(", ")],
      ["ownership", v.ownership],
      [
        "size",
        v.size_bytes == null
          ? "none: its files count against the daemon's disk"
          : `${formatSize(v.size_bytes)}, a file system of its own (${v.free_bytes == null ? "not mounted" : `${formatSize(v.free_bytes)} free`})`,
      ],
      ...(v.host_path ? [["host_path", v.host_path]] : []),
    ],
  );
  return ExitCodes.ok;
}

/** Bound to `sbx volume show` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ name: c.args[0]!, json: c.optsWithGlobals().json === true }, ctx);
