// Finding a test's own processes on the host, whatever sandbox they run in.

import fs from "node:fs";
import path from "node:path";
import { SBX_BIN } from "./cli.js";

/** A sleep duration unique to one test ("30.123456"), to find its processes by their argv. */
export function uniqueSleep(seconds = 30): string {
  return `${seconds}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
}

/**
 * Pids of live processes whose argv contains `arg` (any namespace: /proc shows them
 * all): the commands themselves. Left out: bwrap (whose argv ends with the command's)
 * and the sbx client that asked for them (`sbx exec -- sleep ARG` carries it too).
 */
export function processesWithArg(arg: string): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
      const sbxClient = argv.includes(SBX_BIN) || path.basename(argv[0] ?? "").startsWith("sbx");
      if (argv.includes(arg) && state !== "Z" && comm !== "bwrap" && !sbxClient) pids.push(Number(name));
    } catch {
      // gone
    }
  }
  return pids;
}
