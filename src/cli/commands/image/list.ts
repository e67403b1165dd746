// sbx image list

import { ExitCodes } from "../../../common/exit-codes.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { formatTime, printTable } from "../../render/table.js";
import { localImageStore } from "./local-store.js";
import { imageDocument, platformText, sizeText } from "./render.js";

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const images = localImageStore(ctx).listImages();
  if (opts.json) {
    printJson(ctx, { images: images.map(imageDocument) });
    return ExitCodes.ok;
  }
  await printTable(
    ctx.io,
    ["DIGEST", "REFERENCES", "PLATFORM", "SIZE", "PULLED"],
    images.map((i) => [
      i.digest.slice(0, 19),
      i.references.join(", ") || "-",
      platformText(i.platform),
      sizeText(i.size),
      formatTime(ctx.io, i.pulledAt),
    ]),
  );
  return ExitCodes.ok;
}

/** Bound to `sbx image list` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ json: c.optsWithGlobals().json === true }, ctx);
