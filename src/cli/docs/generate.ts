// The generated files, by path relative to the package root: what `npm run generate`
// writes and what test/docs checks the shipped files against. docs/openapi.json is the
// document the daemon serves at GET /api/v1/openapi.json (src/protocol/openapi/).

import type { Command } from "commander";
import type { Runtime } from "../command.js";
import { createBufferIO } from "../io/io.js";
import { completeTree } from "../command.js";
import { buildProgram } from "../program.js";
import { generateCompletion } from "./completions.js";
import type { Shell } from "./shells.js";
import { generateManPage } from "./manpage.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { openApiText } from "../../protocol/openapi/document.js";

export const COMPLETION_FILES: Record<Shell, string> = {
  bash: "completions/sbx.bash",
  zsh: "completions/_sbx",
  fish: "completions/sbx.fish",
};

/** The whole command tree as `sbx` builds it (every noun's verbs), with a runtime that is never used. */
export function docsProgram(): Command {
  const rt: Runtime = {
    io: createBufferIO(),
    env: {},
    interrupt: new AbortController().signal,
    onFirstInterrupt: () => () => undefined,
    exitCode: ExitCodes.ok,
  };
  return completeTree(buildProgram(rt));
}

export function generatedFiles(program: Command = docsProgram()): Record<string, string> {
  return {
    "man/sbx.1": generateManPage(program),
    [COMPLETION_FILES.bash]: generateCompletion(program, "bash"),
    [COMPLETION_FILES.zsh]: generateCompletion(program, "zsh"),
    [COMPLETION_FILES.fish]: generateCompletion(program, "fish"),
    "docs/openapi.json": openApiText(),
  };
}
