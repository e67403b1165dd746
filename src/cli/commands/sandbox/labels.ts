// The label flags of `sbx sandbox` (docs/protocol.md, "Labels"): `--label k=v` on create,
// `--label k=v` / `--label k-` (remove, as kubectl) on update, and `--label` selectors on
// list, stop and rm; and acting on every sandbox a selector matches, asking first.

import { SbxError, UsageError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import {
  type Labels,
  labelKeyProblem,
  labelValueProblem,
  parseRequirement,
  selectorText,
} from "../../../protocol/labels.js";
import type { Sandbox } from "../../../protocol/types.js";
import type { Context } from "../../context.js";

/** `--label k=v` (repeatable), each checked as the backend would. */
export function parseLabelFlags(values: readonly string[] | undefined): Labels {
  const labels: Labels = {};
  for (const text of values ?? []) {
    const eq = text.indexOf("=");
    if (eq <= 0) throw new UsageError(`--label takes KEY=VALUE, not ${JSON.stringify(text)} (e.g. team=web)`);
    const [key, value] = [text.slice(0, eq), text.slice(eq + 1)];
    const problem = labelKeyProblem(key) ?? labelValueProblem(key, value);
    if (problem !== null) throw new UsageError(`--label ${text}: ${problem}`);
    labels[key] = value;
  }
  return labels;
}

/** Update's `--label k=v` (set) and `--label k-` (remove): what to send, null removing. */
export function parseLabelChanges(values: readonly string[] | undefined): Record<string, string | null> {
  const changes: Record<string, string | null> = {};
  for (const text of values ?? []) {
    if (!text.includes("=") && text.endsWith("-")) {
      const key = text.slice(0, -1);
      const problem = labelKeyProblem(key);
      if (problem !== null) throw new UsageError(`--label ${text}: ${problem}`);
      changes[key] = null;
    } else {
      Object.assign(changes, parseLabelFlags([text]));
    }
  }
  return changes;
}

/** `--label` selectors (k=v, k!=v, k, !k; repeatable, all must hold) as the `selector` sent; undefined: none. */
export function selectorFromFlags(values: readonly string[] | undefined): string | undefined {
  if (values === undefined || values.length === 0) return undefined;
  try {
    return selectorText(values.flatMap((v) => v.split(",")).map(parseRequirement));
  } catch (err) {
    throw new UsageError(`--label: ${(err as Error).message}`, "a selector is k=v, k!=v, k (has it) or !k");
  }
}

/** The sandboxes a selector matches; none is refused (exit 125), saying so. */
export async function matchingSandboxes(ctx: Context, selector: string): Promise<Sandbox[]> {
  const matched = await (await ctx.api()).listSandboxes(selector);
  if (matched.length === 0) {
    throw new UsageError(`no sandbox matches --label ${selector}`, "sbx sandbox list --show-labels shows their labels");
  }
  return matched;
}

/**
 * Says which sandboxes a selector chose and, on a terminal, asks before acting on them
 * (`yes`: not asked). Off a terminal it is refused without --yes: a selector is easy to get wrong.
 */
export async function confirmSelected(
  ctx: Context,
  verb: "stop" | "remove",
  selector: string,
  sandboxes: readonly Sandbox[],
  yes: boolean,
): Promise<void> {
  const names = sandboxes.map((s) => s.name).join(", ");
  const gone = verb === "remove" ? " (removing deletes each one's workspace, jobs and processes)" : "";
  const what = `--label ${selector} matches ${sandboxes.length} sandbox(es): ${names}${gone}`;
  if (yes) return;
  const again = `sbx sandbox ${verb === "stop" ? "stop" : "rm"} --label ${selector} --yes`;
  if (!ctx.io.canPrompt) throw new UsageError(`${what}; not done without --yes (no terminal to ask on)`, again);
  ctx.io.err(`sbx: ${what}`);
  const { confirm } = await import("@inquirer/prompts");
  let answer: boolean;
  try {
    answer = await confirm(
      {
        message: `${verb === "stop" ? "Stop" : "Remove"} ${sandboxes.length === 1 ? "it" : `all ${sandboxes.length}`}?`,
        default: false,
      },
      { ...ctx.io.promptStreams(), signal: ctx.interrupt },
    );
  } catch (err) {
    const name = (err as Error | null)?.name;
    if (name !== "ExitPromptError" && name !== "AbortPromptError") throw err;
    throw new SbxError("cancelled", `cancelled; nothing was done`, { exitCode: ExitCodes.cancelled });
  }
  if (!answer) throw new SbxError("not_confirmed", "nothing was done", { exitCode: ExitCodes.usage, hint: again });
}

/**
 * Acts on each sandbox in turn; one that fails is said and the rest still go. The exit
 * code is the first failure's (0 when all went).
 */
export async function forEachSandbox(
  ctx: Context,
  sandboxes: readonly Sandbox[],
  act: (s: Sandbox) => Promise<void>,
): Promise<number> {
  let code: number = ExitCodes.ok;
  for (const s of sandboxes) {
    try {
      await act(s);
    } catch (err) {
      if (!(err instanceof SbxError)) throw err;
      ctx.io.err(`sbx: ${err.message}`);
      if (code === ExitCodes.ok) code = err.exitCode;
    }
  }
  return code;
}

/** A sandbox named, or a `--label` selector: one of them, never both. */
export function refOrSelector(
  ref: string | undefined,
  labels: readonly string[] | undefined,
  verb: "stop" | "rm",
): { ref: string; selector?: undefined } | { ref?: undefined; selector: string } {
  const selector = selectorFromFlags(labels);
  if (ref !== undefined && selector !== undefined) {
    throw new UsageError(`give a sandbox or --label, not both`, `sbx sandbox ${verb} --label ${selector}`);
  }
  if (selector !== undefined) return { selector };
  if (ref === undefined) throw new UsageError(`which sandbox? give its id or name, or --label KEY=VALUE`);
  return { ref };
}
