// The mcp section of npm run bench (bench/run.mjs): `run_process` of `true` through
// `sbx mcp` over stdio (the server already started, as an agent has it) next to
// `sbx exec -- true` in the same run, and 64 concurrent run_process calls from one
// client: every one answered, every receipt complete (mcp_tool and request id on it).

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** CPU ms (user + system) a process has used, from /proc (null where there is none). */
function cpuMs(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

export async function mcpBench({ env, sbxScript, runs, table, fmt, summary, median }) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--", sbxScript, "mcp"],
    env,
    stderr: "ignore",
  });
  const client = new Client({ name: "sbx-bench", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid;
  try {
    const call = async (name, args) => {
      const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
      if (r.isError) throw new Error(`${name}: ${r.content?.[0]?.text}`);
      return r;
    };
    const runTrue = () => call("run_process", { argv: ["true"], yield_ms: 30_000 });
    const exec = () => {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(process.execPath, ["--", sbxScript, "exec", "--", "true"], { env, stdio: "ignore" });
      if (r.status !== 0) throw new Error(`sbx exec -- true exited ${r.status}`);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    await runTrue();
    exec();
    const mcpTimes = [];
    const execTimes = [];
    let serverCpu = 0;
    for (let i = 0; i < runs; i++) {
      const c0 = cpuMs(pid);
      const t0 = process.hrtime.bigint();
      const r = await runTrue();
      mcpTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
      serverCpu += (cpuMs(pid) ?? 0) - (c0 ?? 0);
      if (r.structuredContent.status !== "exited") throw new Error(`run_process true: ${r.structuredContent.status}`);
      execTimes.push(exec());
    }
    const m = median(mcpTimes);
    const e = median(execTimes);

    // 64 at once from one client.
    const n = 64;
    const tag = `bench-${process.pid}-${Date.now()}`;
    const t0 = process.hrtime.bigint();
    const settled = await Promise.allSettled(
      Array.from({ length: n }, (_, i) =>
        call("run_process", { argv: ["true"], yield_ms: 60_000, idempotency_key: `${tag}-${i}` }),
      ),
    );
    const wall = Number(process.hrtime.bigint() - t0) / 1e6;
    const answered = settled.filter((s) => s.status === "fulfilled" && s.value.structuredContent.status === "exited");
    const listed = spawnSync(process.execPath, ["--", sbxScript, "receipts", "list", "--json", "--limit", "1000"], {
      env,
      maxBuffer: 1 << 30,
    });
    const receipts = JSON.parse(listed.stdout.toString()).filter((d) => d.idempotency_key.startsWith(`${tag}-`));
    const complete = receipts.filter(
      (d) => d.classification === "succeeded" && d.mcp_tool === "run_process" && d.mcp_request_id !== null,
    );
    table(
      "mcp",
      "sbx mcp (stdio, SDK client)",
      ["what", "median ms", "ratio to sbx exec -- true"],
      [
        [`run_process of true (server started; yield_ms 30000), ${runs} calls`, fmt(m), fmt(m / e, 2)],
        ["sbx exec -- true (Node, a new process each time)", fmt(e), "1.00"],
        [`server CPU per run_process call (/proc utime+stime)`, fmt(serverCpu / runs), "-"],
        [
          `${n} concurrent run_process calls from one client: answered ${answered.length}/${n}, receipts complete ${complete.length}/${n}`,
          fmt(wall),
          "-",
        ],
      ],
      ["Target: run_process of true at most 0.5× sbx exec -- true."],
    );
    summary.push(["mcp: run_process true / sbx exec -- true", m / e, null, "≤ 0.5×"]);
    if (answered.length !== n || complete.length !== n) {
      throw new Error(`64 concurrent run_process: answered ${answered.length}, receipts complete ${complete.length}`);
    }
  } finally {
    await client.close();
  }
}
