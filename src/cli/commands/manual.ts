// sbx help --man: the manual, sbx(1). The page is generated from the command tree this
// sbx carries (docs/manpage.ts: the very text of man/sbx.1, which test/docs holds to
// it), so the release binary has it with nothing installed beside it. On a terminal it
// is formatted and paged as `man` would: through `man -l -` (its $MANPAGER or $PAGER),
// else groff into $PAGER (less -R, or cat); where neither formatter is installed the
// source is printed and that is said. Anywhere else (a pipe, a file) the source is
// printed: `sbx help --man > sbx.1` is the page to install.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import type { Context } from "../context.js";
import { ExitCodes } from "../../common/exit-codes.js";

/** How the page reaches the reader on a terminal: a program fed the page on stdin. */
export interface ManualViewer {
  file: string;
  args: string[];
  /** Said in a failure. */
  name: string;
}

/** The first executable named `name` on PATH, or null. */
export function onPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** man where it is installed, else groff into the pager, else null (nothing here formats a man page). */
export function manualViewer(env: NodeJS.ProcessEnv): ManualViewer | null {
  const man = onPath("man", env);
  if (man !== null) return { file: man, args: ["-l", "-"], name: "man -l -" };
  const groff = onPath("groff", env);
  const sh = onPath("sh", env);
  if (groff !== null && sh !== null) {
    // $PAGER as the shell reads it (it may carry options), less -R where it is not set, cat without less.
    const script =
      'p="${PAGER:-less -R}"; command -v "${p%% *}" >/dev/null 2>&1 || p=cat; "$0" -man -Tutf8 | eval "$p"';
    return { file: sh, args: ["-c", script, groff], name: "groff -man -Tutf8 | $PAGER" };
  }
  return null;
}

export async function showManual(ctx: Context, program: Command): Promise<number> {
  const { generateManPage } = await import("../docs/manpage.js");
  const page = generateManPage(program);
  if (!ctx.io.stdoutIsTTY) {
    ctx.io.writeOut(page);
    return ExitCodes.ok;
  }
  const viewer = manualViewer(ctx.env);
  if (viewer === null) {
    ctx.io.info("sbx: neither man nor groff is installed to format the manual; its source (roff) follows");
    ctx.io.writeOut(page);
    return ExitCodes.ok;
  }
  const ended = await new Promise<{ code: number | null; error: Error | null }>((resolve) => {
    // The terminal is the pager's while it runs: sbx's stdout and stderr are given to it.
    const child = spawn(viewer.file, viewer.args, { stdio: ["pipe", "inherit", "inherit"], env: ctx.env });
    child.on("error", (error) => resolve({ code: null, error }));
    child.on("close", (code) => resolve({ code, error: null }));
    // A pager quit before the whole page was read closes its end: that is no failure.
    child.stdin.on("error", () => undefined);
    child.stdin.end(page);
  });
  if (ended.error !== null || ended.code !== 0) {
    const why = ended.error !== null ? ended.error.message : `it exited ${ended.code ?? "on a signal"}`;
    ctx.io.info(
      `sbx: could not show the manual through ${viewer.name}: ${why}; \`sbx help --man | less\` shows its source`,
    );
    return ExitCodes.internal;
  }
  return ExitCodes.ok;
}
