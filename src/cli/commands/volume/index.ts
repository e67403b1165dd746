// sbx volume: named volumes that several sandboxes mount (docs/operations.md, "Named
// volumes"). Here: the declarations of its verbs; each verb's run code is its own module.

import type { Command } from "commander";
import { type Bind, declareNoun, withExamples } from "../../command.js";

export function register(program: Command, bind: Bind): void {
  declareNoun(program, bind, {
    name: "volume",
    summary: "create, list, show and remove named volumes",
    description:
      "A named volume is a directory the backend keeps that sandboxes mount, each where it\n" +
      "asks (sbx sandbox create --volume NAME:/path[:ro]): a dependency cache, a dataset.\n" +
      "Each sandbox keeps its own uid; as root, a volume has a group of its own that every\n" +
      "sandbox mounting it gets, so they all read and write it. Never under /workspace.",
    verbs: [declareCreate, declareList, declareShow, declareRm],
    examples: [
      { command: "sbx volume create cache", description: "a volume named cache" },
      { command: "sbx sandbox create a --volume cache:/cache", description: "mounted at /cache in a" },
      { command: "sbx sandbox create b --volume cache:/cache:ro", description: "and read-only in b" },
    ],
  });
}

function declareCreate(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("create")
    .summary("create a named volume")
    .description(
      "Create an empty named volume. With --size it is a file system of its own of that size\n" +
        "(an ext4 image, loop-mounted: needs a daemon running as root, loop devices and\n" +
        "mkfs.ext4; refused saying which is missing): a write past it fails with ENOSPC in every\n" +
        "sandbox that mounts it. Without, its files count against the disk the daemon keeps its\n" +
        "data on.",
    )
    .argument("<name>", "1-63 of a-z 0-9 _ . - starting with a letter or digit")
    .option("--size <size>", "its size, a file system of its own (at least 16MiB; root)")
    .option("--json", "print the volume as JSON")
    .action(bind(() => import("./create.js")));
  withExamples(cmd, [
    { command: "sbx volume create cache", description: "a volume named cache" },
    { command: "sbx volume create data --size 2GiB", description: "one of 2 GiB: writes past it fail (ENOSPC)" },
  ]);
}

function declareList(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("list")
    .alias("ls")
    .summary("list named volumes")
    .description("List the backend's named volumes and the sandboxes that mount each.")
    .option("--json", "print {volumes: [...]}")
    .action(bind(() => import("./list.js")));
  withExamples(cmd, [{ command: "sbx volume list", description: "every volume" }]);
}

function declareShow(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("show")
    .summary("show a named volume")
    .description("Show a volume: who mounts it, how the sandboxes' uids share it, where it is on the host.")
    .argument("<name>", "the volume")
    .option("--json", "print the volume as JSON")
    .action(bind(() => import("./show.js")));
  withExamples(cmd, [{ command: "sbx volume show cache", description: "who mounts cache" }]);
}

function declareRm(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("rm")
    .summary("remove a named volume and its files")
    .description("Remove a volume and every file in it. Refused while a sandbox mounts it, naming them.")
    .argument("<name>", "the volume")
    .option("--json", "print the removed volume as JSON")
    .action(bind(() => import("./rm.js")));
  withExamples(cmd, [{ command: "sbx volume rm cache", description: "remove cache (no sandbox mounts it)" }]);
}
