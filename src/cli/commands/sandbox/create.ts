// sbx sandbox create

import { randomUUID } from "node:crypto";
import { type Command, Option } from "commander";
import type { IsolationRequest } from "../../../protocol/types.js";
import { isValidSandboxRef } from "../../../protocol/validate.js";
import { type Bind, declareChoices, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { UsageError } from "../../errors.js";
import { refusalIsUsage } from "../../refusal.js";
import { printJson } from "../../render/outcome.js";
import { printSandboxes, sandboxDocument } from "./render.js";

const ISOLATIONS = ["auto", "bwrap", "none"];

export interface CreateOptions {
  name: string | undefined;
  isolation: IsolationRequest | undefined;
  network: boolean | undefined;
  json: boolean;
}

export function parseCreateOptions(
  name: string | undefined,
  raw: { isolation?: string; network?: boolean; json?: boolean },
): CreateOptions {
  if (name !== undefined && !isValidSandboxRef(name)) {
    throw new UsageError(`invalid sandbox name ${JSON.stringify(name)}: letters, digits, _ . - (at most 63)`);
  }
  return {
    name,
    isolation: raw.isolation as IsolationRequest | undefined,
    network: raw.network,
    json: raw.json === true,
  };
}

export async function run(opts: CreateOptions, ctx: Context): Promise<number> {
  const api = await ctx.api();
  const sandbox = await refusalIsUsage(
    () =>
      api.createSandbox(
        {
          ...(opts.name === undefined ? {} : { name: opts.name }),
          ...(opts.isolation === undefined ? {} : { isolation: opts.isolation }),
          ...(opts.network === undefined ? {} : { network: opts.network }),
        },
        `sbx-${randomUUID()}`,
      ),
    "no sandbox was created",
  );
  if (opts.json) printJson(ctx, sandboxDocument(sandbox));
  else printSandboxes(ctx.io, [sandbox]);
  return 0;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("create")
    .summary("create a sandbox")
    .description(
      "Create a sandbox with its own /workspace. With bwrap isolation (the default where\n" +
        "bubblewrap works) its commands see the host's system directories read-only, their\n" +
        "/workspace, a private /tmp and nothing else, with no network unless --network.\n" +
        "With none, commands run as you, on the host, and see what you see.",
    )
    .argument("[name]", "a name to refer to it by")
    .addOption(
      new Option("--isolation <kind>", "auto (bwrap where it works, else none), bwrap or none").choices(ISOLATIONS),
    )
    .option("--network", "let its commands reach the network (bwrap: otherwise only lo)")
    .option("--no-network", "no network (needs bwrap)")
    .option("--json", "print the sandbox as JSON")
    .action(bind(async (ctx, c) => run(parseCreateOptions(c.args[0], c.optsWithGlobals()), ctx)));
  declareChoices(cmd, "--isolation", ISOLATIONS);
  withExamples(cmd, [
    { command: "sbx sandbox create build", description: "a sandbox named build (isolated where bwrap works)" },
    { command: "sbx cp ./src build:/workspace/src", description: "copy the project in" },
    { command: "sbx exec -s build -- make", description: "then run in it" },
    { command: "sbx sandbox create fetch --network", description: "one whose commands may reach the network" },
    { command: "sbx sandbox create legacy --isolation none", description: "no isolation, said loudly" },
  ]);
}
