// sbx __complete KIND [-- WORDS...]: the words a shell completion offers for a value
// the backend knows (the generated scripts call it: src/cli/docs/completions.ts), one
// per line: sandbox names, process names (a process without one: its short id), job
// ids. WORDS are the command line typed so far: its -s/--sandbox picks the sandbox.
// Never starts the local daemon (a TAB press must not), asks with a short deadline,
// and prints nothing when the backend cannot be asked.

import { UsageError } from "../../common/errors.js";
import { shortId } from "../../common/ids.js";
import { ExitCodes } from "../../common/exit-codes.js";
import type { RunFn } from "../command.js";
import { sandboxFor } from "../command-flags.js";
import type { Context } from "../context.js";

export const COMPLETION_KINDS = ["sandbox-name", "process-name", "job-id"] as const;
export type CompletionKind = (typeof COMPLETION_KINDS)[number];

/** Job ids offered: the newest this many (a sandbox may hold thousands). */
const JOBS_OFFERED = 50;

/** The -s/--sandbox value among the words typed so far, if any. */
export function sandboxOfWords(words: readonly string[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if ((w === "-s" || w === "--sandbox") && i + 1 < words.length) found = words[++i];
    else if (w.startsWith("--sandbox=")) found = w.slice("--sandbox=".length);
    else if (w === "--") break;
  }
  return found;
}

export async function run(opts: { kind: string; words: string[] }, ctx: Context): Promise<number> {
  if (!(COMPLETION_KINDS as readonly string[]).includes(opts.kind)) {
    throw new UsageError(`unknown kind ${JSON.stringify(opts.kind)}`, `one of: ${COMPLETION_KINDS.join(", ")}`);
  }
  try {
    // A completion that would make the shell wait gives up after 2 s.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string[]>((resolve) => {
      timer = setTimeout(() => resolve([]), 2_000);
      timer.unref();
    });
    const words = await Promise.race([wordsOf(opts.kind as CompletionKind, opts.words, ctx), late]);
    clearTimeout(timer);
    for (const word of words) ctx.io.out(word);
  } catch {
    // Nothing to offer: a completion stays silent.
  }
  return ExitCodes.ok;
}

async function wordsOf(kind: CompletionKind, words: readonly string[], ctx: Context): Promise<string[]> {
  const api = await ctx.api({ ...ctx.endpoint(), autoStart: false });
  const sandbox = sandboxFor(ctx, sandboxOfWords(words));
  switch (kind) {
    case "sandbox-name":
      return (await api.listSandboxes()).map((s) => s.name);
    case "process-name": {
      const { ProcessesApi } = await import("../../client/processes.js");
      const processes = await new ProcessesApi(api.http).list(sandbox);
      return processes.map((p) => p.name ?? shortId(p.process_id));
    }
    case "job-id": {
      const { JobsApi } = await import("../../client/jobs.js");
      const { jobs } = await new JobsApi(api.http).list(sandbox);
      return jobs.slice(-JOBS_OFFERED).map((j) => j.job_id);
    }
  }
}

/** Bound to `sbx __complete` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const [kind, ...words] = c.args as string[];
  return run({ kind: kind ?? "", words }, ctx);
};
