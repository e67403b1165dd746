import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { describeIsolations, groupAlive, seenFrom, sharedBackend, type TestBackend, until } from "./support.js";

describeIsolations("processes", (isolation) => {
  const PROCESSES = "/api/v1/sandbox/default/processes";

  let backend: TestBackend;
  let workspace: string;
  sharedBackend(
    (b, dir) => {
      backend = b;
      workspace = dir;
    },
    {},
    isolation,
  );

  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  async function start(body: unknown, headers?: Record<string, string>): Promise<any> {
    const res = await backend.api("POST", PROCESSES, { body, ...(headers && { headers }) });
    expect(res.status, res.text).toBe(201);
    return res.json;
  }

  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  async function result(pid: string, waitMs = 10_000): Promise<any> {
    const res = await backend.api("GET", `${PROCESSES}/${pid}/result?wait_ms=${waitMs}`);
    expect(res.status, res.text).toBe(200);
    return res.json;
  }

  /** Reads a stream from `offset` until eof, following next_offset; returns the bytes and every chunk. */
  async function readAll(pid: string, stream = "stdout", opts: { offset?: number; limit?: number } = {}) {
    const parts: Buffer[] = [];
    // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
    const chunks: any[] = [];
    let offset = opts.offset ?? 0;
    for (;;) {
      const limit = opts.limit === undefined ? "" : `&limit=${opts.limit}`;
      const res = await backend.api(
        "GET",
        `${PROCESSES}/${pid}/logs?stream=${stream}&offset=${offset}${limit}&wait_ms=5000`,
      );
      expect(res.status, res.text).toBe(200);
      chunks.push(res.json);
      if (chunks.length === 1) expect(res.json.offset).toBeGreaterThanOrEqual(offset);
      else expect(res.json.offset).toBe(offset);
      parts.push(Buffer.from(res.json.data, "base64"));
      if (res.json.eof) break;
      offset = res.json.next_offset;
    }
    return { data: Buffer.concat(parts), chunks };
  }

  describe("starting and reading a process", () => {
    it("refuses a name a process that has not exited holds (409 process_name_in_use), nothing started", async () => {
      const first = await start({ command: ["sleep", "300"], name: "holder" });
      const dup = await backend.api("POST", PROCESSES, { body: { command: ["sleep", "300"], name: "holder" } });
      expect(dup.status, dup.text).toBe(409);
      expect(dup.json.error).toMatchObject({
        code: "process_name_in_use",
        details: { name: "holder", process_id: first.process_id, state: "running" },
      });
      const listed = (await backend.api("GET", PROCESSES)).json.processes;
      expect(listed.filter((p: { name: string }) => p.name === "holder")).toHaveLength(1);
      const stopped = await backend.api("DELETE", `${PROCESSES}/${first.process_id}?grace_ms=1000`);
      expect(stopped.status, stopped.text).toBeLessThan(300);
      await until(async () => (await backend.api("GET", `${PROCESSES}/${first.process_id}`)).json.state === "exited");
      const again = await start({ command: ["true"], name: "holder" });
      expect(again.process_id).not.toBe(first.process_id);
    });

    it("answers 201 with the process, then its result, logs and listing", async () => {
      const p = await start({ command: "echo out; echo err >&2", name: "greeter" });
      // In a live sandbox the init starts the command and says so a moment later: one this
      // quick may have ended (and its pid gone) by then, and is answered as it is.
      const quick = isolation === "bwrap" && p.state === "exited";
      expect(p).toEqual({
        process_id: expect.stringMatching(/^prc_[0-9a-hjkmnp-tv-z]{16}$/),
        sandbox_id: expect.stringMatching(/^sbx_/),
        name: "greeter",
        idempotency_key: null,
        command: "echo out; echo err >&2",
        working_dir: "/workspace",
        state: quick ? "exited" : "running",
        boot: expect.stringMatching(/^boot_[0-9a-f]{16}$/),
        os_pid:
          isolation === "none"
            ? expect.any(Number)
            : quick
              ? null
              : expect.toSatisfy((v) => v === null || Number.isInteger(v)),
        restarts: 0,
        restart: { policy: "never", max_restarts: 5, backoff_ms: 1000, max_backoff_ms: 30000 },
        stdin_enabled: false,
        timeout_ms: null,
        outcome: quick ? "succeeded" : "pending",
        exit_code: quick ? 0 : null,
        signal: null,
        end_reason: quick ? "exited" : null,
        last_run: quick ? expect.anything() : null,
        next_restart_at: null,
        recovery: null,
        created_at: expect.any(String),
        started_at: expect.any(String),
        ended_at: quick ? expect.any(String) : null,
      });
      expect(await result(p.process_id)).toEqual({
        process_id: p.process_id,
        outcome: "succeeded",
        exit_code: 0,
        signal: null,
        end_reason: "exited",
        complete: true,
        output_capture: {
          stdout: { bytes: 4, oldest_offset: 0, rotated: false },
          stderr: { bytes: 4, oldest_offset: 0, rotated: false },
        },
        started_at: p.started_at,
        ended_at: expect.any(String),
        restarts: 0,
        stdout_tail: "out\n",
        stderr_tail: "err\n",
      });
      const logs = await backend.api("GET", `${PROCESSES}/${p.process_id}/logs?stream=stderr`);
      expect(logs.json).toEqual({
        process_id: p.process_id,
        stream: "stderr",
        offset: 0,
        next_offset: 4,
        data: Buffer.from("err\n").toString("base64"),
        eof: true,
        rotated: false,
        oldest_offset: 0,
        generation: 0,
      });
      const got = await backend.api("GET", `${PROCESSES}/${p.process_id}`);
      expect(got.json).toMatchObject({
        state: "exited",
        outcome: "succeeded",
        exit_code: 0,
        os_pid: null,
        last_run: { generation: 0, outcome: "succeeded", exit_code: 0, signal: null },
      });
      const list = await backend.api("GET", PROCESSES);
      expect(list.json.processes.map((x: { process_id: string }) => x.process_id)).toContain(p.process_id);
    });

    it("keeps output on disk under the sandbox, one directory per process", async () => {
      const p = await start({ command: ["printf", "abc"] });
      await result(p.process_id);
      const dir = path.join(path.dirname(workspace), "processes", p.process_id);
      expect(fs.readFileSync(path.join(dir, "stdout.0.log"), "utf8")).toBe("abc");
    });

    it("round-trips all 256 byte values through stdin and cat", async () => {
      const p = await start({ command: ["cat"], stdin: true });
      expect(p.stdin_enabled).toBe(true);
      const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const raw = await backend.api("POST", `${PROCESSES}/${p.process_id}/stdin`, {
        raw: all,
        headers: { "content-type": "application/octet-stream" },
      });
      expect(raw.status, raw.text).toBe(200);
      expect(raw.json).toEqual({ process_id: p.process_id, generation: 0, bytes_written: 256, eof: false });
      const json = await backend.api("POST", `${PROCESSES}/${p.process_id}/stdin`, {
        body: { data: all.toString("base64"), eof: true },
      });
      expect(json.json).toMatchObject({ bytes_written: 256, eof: true });
      const closed = await backend.api("POST", `${PROCESSES}/${p.process_id}/stdin`, { body: { data: "AA==" } });
      expect([closed.status, closed.json.error.code]).toEqual([
        409,
        expect.stringMatching(/^(stdin_closed|process_not_running)$/),
      ]);
      const out = await readAll(p.process_id);
      expect(out.data).toEqual(Buffer.concat([all, all]));
      expect((await result(p.process_id)).outcome).toBe("succeeded");
    });

    it("refuses stdin writes to a process started without stdin: 409 stdin_not_enabled", async () => {
      const p = await start({ command: ["sleep", "30"] });
      const res = await backend.api("POST", `${PROCESSES}/${p.process_id}/stdin`, { body: { data: "aGk=" } });
      expect(res.status).toBe(409);
      expect(res.json.error).toMatchObject({ code: "stdin_not_enabled", details: { process_id: p.process_id } });
      await backend.api("DELETE", `${PROCESSES}/${p.process_id}?grace_ms=0`);
    });

    it("refuses stdin writes after eof with 409 stdin_closed while the run goes on", async () => {
      const p = await start({ command: ["sleep", "30"], stdin: true });
      const eof = await backend.api("POST", `${PROCESSES}/${p.process_id}/stdin?eof=true`, {
        raw: Buffer.alloc(0),
        headers: { "content-type": "application/octet-stream" },
      });
      expect(eof.json).toEqual({ process_id: p.process_id, generation: 0, bytes_written: 0, eof: true });
      const res = await backend.api("POST", `${PROCESSES}/${p.process_id}/stdin`, { body: { data: "aGk=" } });
      expect([res.status, res.json.error.code]).toEqual([409, "stdin_closed"]);
      await backend.api("DELETE", `${PROCESSES}/${p.process_id}?grace_ms=0`);
    });

    it("answers a large stdin write to a command that does not read it, and bounds what may wait", async () => {
      const p = await start({ command: ["sleep", "3600"], stdin: true });
      const url = `${PROCESSES}/${p.process_id}/stdin`;
      const octets = (k: string) => ({ "content-type": "application/octet-stream", "idempotency-key": k });
      const big = await backend.api("POST", url, { raw: Buffer.alloc(1024 * 1024, 0x61), headers: octets("w-1") });
      expect(big.status, big.text).toBe(200);
      expect(big.json).toMatchObject({ bytes_written: 1024 * 1024, eof: false });
      // Answered while the command still runs (for an hour), never reading: the write did not wait for it.
      expect((await backend.api("GET", `${PROCESSES}/${p.process_id}`)).json).toMatchObject({
        state: "running",
        restarts: 0,
      });
      // Its key is answered, not stuck in request_in_progress.
      const replay = await backend.api("POST", url, { raw: Buffer.alloc(1024 * 1024, 0x61), headers: octets("w-1") });
      expect([replay.status, replay.headers["idempotent-replayed"]]).toEqual([200, "true"]);
      // More than may wait: refused, nothing written, with a retry hint; the key stays free.
      const more = await backend.api("POST", url, { raw: Buffer.alloc(256 * 1024, 0x62), headers: octets("w-2") });
      expect(more.status).toBe(409);
      expect(more.json.error).toMatchObject({ code: "stdin_busy", details: { process_id: p.process_id } });
      expect(more.headers["retry-after"]).toBe("1");
      const again = await backend.api("POST", url, { raw: Buffer.alloc(256 * 1024, 0x62), headers: octets("w-2") });
      expect(again.json.error.code).toBe("stdin_busy");
      await backend.api("DELETE", `${PROCESSES}/${p.process_id}?grace_ms=0`);
    });

    it("reads 15 MB of seq output back with an identical sha256", async () => {
      const expected = createHash("sha256");
      let size = 0;
      for (let i = 1; i <= 2_000_000; i++) {
        const line = `${i}\n`;
        expected.update(line);
        size += line.length;
      }
      const p = await start({ command: ["seq", "1", "2000000"] });
      const out = await readAll(p.process_id, "stdout", { limit: 8 * 1024 * 1024 });
      expect(out.data.length).toBe(size);
      expect(createHash("sha256").update(out.data).digest("hex")).toBe(expected.digest("hex"));
      expect(out.chunks.every((c) => c.rotated === false)).toBe(true);
      // Default segments are 8 MiB: the stream spans two files.
      const dir = path.join(path.dirname(workspace), "processes", p.process_id);
      expect(
        fs
          .readdirSync(dir)
          .filter((f) => f.startsWith("stdout."))
          .sort(),
      ).toEqual(["stdout.0.log", "stdout.8388608.log"]);
    });

    it("loses and repeats nothing when reads are joined by next_offset, also while the process writes", async () => {
      const p = await start({ command: "for i in $(seq 1 40); do echo line-$i; sleep 0.01; done" });
      const small = await readAll(p.process_id, "stdout", { limit: 7 });
      const expected = Array.from({ length: 40 }, (_, i) => `line-${i + 1}\n`).join("");
      expect(small.data.toString()).toBe(expected);
      for (const [i, c] of small.chunks.entries()) {
        if (i > 0) expect(c.offset).toBe(small.chunks[i - 1].next_offset);
        expect(c.next_offset - c.offset).toBe(Buffer.from(c.data, "base64").length);
      }
      // Two reads of the finished stream, split anywhere, join exactly.
      const a = (await backend.api("GET", `${PROCESSES}/${p.process_id}/logs?offset=0&limit=123`)).json;
      const b = (await backend.api("GET", `${PROCESSES}/${p.process_id}/logs?offset=${a.next_offset}`)).json;
      expect(Buffer.concat([Buffer.from(a.data, "base64"), Buffer.from(b.data, "base64")]).toString()).toBe(expected);
      expect([a.eof, b.eof]).toEqual([false, true]);
    });

    it("long-polls at the end of a stream and answers as soon as bytes arrive", async () => {
      const p = await start({ command: "while [ ! -e go-late ]; do sleep 0.02; done; echo late; sleep 3600" });
      // Asked before the bytes exist (they come once go-late does), with a wait longer than any answer takes.
      const waitMs = 50_000;
      const t0 = Date.now();
      const asked = backend.api("GET", `${PROCESSES}/${p.process_id}/logs?offset=0&wait_ms=${waitMs}`);
      fs.writeFileSync(path.join(workspace, "go-late"), "");
      const res = await asked;
      expect(Buffer.from(res.json.data, "base64").toString()).toBe("late\n");
      expect(res.json.eof).toBe(false);
      // Answered when the bytes came, not when its wait ran out.
      expect(Date.now() - t0).toBeLessThan(waitMs);
      // Nothing more: the wait ends at wait_ms with no data and no eof.
      const idle = await backend.api("GET", `${PROCESSES}/${p.process_id}/logs?offset=5&wait_ms=200`);
      expect(idle.json).toMatchObject({ offset: 5, next_offset: 5, data: "", eof: false });
      await backend.api("DELETE", `${PROCESSES}/${p.process_id}?grace_ms=0`);
    });
  });

  describe("working directory through a symlink", () => {
    it("refuses a working_dir that leads outside /workspace", async () => {
      fs.symlinkSync("../../..", path.join(workspace, "proc-up"));
      const res = await backend.api("POST", PROCESSES, {
        body: { command: ["pwd"], working_dir: "/workspace/proc-up" },
      });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field: "working_dir" } });
    });

    it("does not start a restart in a working_dir that became a symlink out of the workspace", async () => {
      const dir = path.join(workspace, "moving");
      fs.mkdirSync(dir);
      const p = await start({
        command: "pwd; sleep 0.5; exit 1",
        working_dir: "/workspace/moving",
        restart: { policy: "on-failure", max_restarts: 1, backoff_ms: 20 },
      });
      await until(
        async () => (await backend.api("GET", `${PROCESSES}/${p.process_id}/logs?stream=stdout`)).json.data !== "",
        5000,
        "run 0 to start",
      );
      fs.renameSync(dir, `${dir}.old`);
      fs.symlinkSync("../../..", dir);
      const r = await result(p.process_id);
      expect(r).toMatchObject({ outcome: "failed", exit_code: 126, restarts: 1 });
      expect((await readAll(p.process_id)).data.toString()).toBe(`${seenFrom(isolation, workspace)(dir)}\n`);
      expect((await readAll(p.process_id, "stderr")).data.toString()).toContain("leads outside /workspace");
    });
  });

  describe("restart policies", () => {
    it("on-failure with max_restarts 2 runs exactly 3 times and keeps all three runs' output", async () => {
      const p = await start({
        command: 'echo "run $SBX_PROCESS_GENERATION"; echo x >> runs.txt; exit 3',
        restart: { policy: "on-failure", max_restarts: 2, backoff_ms: 20 },
      });
      expect(p.restart).toEqual({ policy: "on-failure", max_restarts: 2, backoff_ms: 20, max_backoff_ms: 30000 });
      const r = await result(p.process_id);
      expect(r).toMatchObject({
        outcome: "failed",
        exit_code: 3,
        signal: null,
        end_reason: "max_restarts",
        restarts: 2,
      });
      expect(fs.readFileSync(path.join(workspace, "runs.txt"), "utf8")).toBe("x\nx\nx\n");
      const out = await readAll(p.process_id);
      expect(out.data.toString()).toBe("run 0\nrun 1\nrun 2\n");
      expect(out.chunks.at(-1).generation).toBe(2);
      // Nothing starts later: it is exited, not waiting in back-off for another run.
      expect((await backend.api("GET", `${PROCESSES}/${p.process_id}`)).json).toMatchObject({
        state: "exited",
        restarts: 2,
      });
      expect(fs.readFileSync(path.join(workspace, "runs.txt"), "utf8")).toBe("x\nx\nx\n");
    });

    it("on-failure does not restart a success; always does, with the back-off showing as state backoff", async () => {
      const once = await start({ command: "exit 0", restart: { policy: "on-failure", backoff_ms: 20 } });
      expect(await result(once.process_id)).toMatchObject({ outcome: "succeeded", restarts: 0, end_reason: "exited" });

      const p = await start({ command: "echo tick", restart: { policy: "always", backoff_ms: 300, max_restarts: 1 } });
      const inBackoff = await until(async () => {
        const got = (await backend.api("GET", `${PROCESSES}/${p.process_id}`)).json;
        return got.state === "backoff" ? got : undefined;
      });
      expect(inBackoff).toMatchObject({
        outcome: "pending",
        exit_code: null,
        os_pid: null,
        restarts: 0,
        next_restart_at: expect.any(String),
        last_run: { generation: 0, outcome: "succeeded", exit_code: 0 },
      });
      const r = await result(p.process_id);
      expect(r).toMatchObject({ outcome: "succeeded", restarts: 1, end_reason: "max_restarts" });
      expect((await readAll(p.process_id)).data.toString()).toBe("tick\ntick\n");
    });

    it("ends at timeout_ms as timed_out, whatever its restart policy", async () => {
      const p = await start({
        command: ["sleep", "30"],
        timeout_ms: 300,
        restart: { policy: "always", backoff_ms: 10 },
      });
      const r = await result(p.process_id);
      expect(r).toMatchObject({
        outcome: "timed_out",
        end_reason: "timed_out",
        signal: "SIGTERM",
        exit_code: null,
        restarts: 0,
        complete: true,
      });
    });

    it("reports TERM sent through the signal route as signal SIGTERM with exit code null", async () => {
      const p = await start({ command: ["sleep", "30"] });
      const sent = await backend.api("POST", `${PROCESSES}/${p.process_id}/signal`, { body: { signal: "TERM" } });
      expect(sent.status).toBe(202);
      expect(sent.json).toEqual({ process_id: p.process_id, signal: "SIGTERM", generation: 0, os_pid: p.os_pid });
      expect(await result(p.process_id)).toMatchObject({ outcome: "failed", signal: "SIGTERM", exit_code: null });
      const again = await backend.api("POST", `${PROCESSES}/${p.process_id}/signal`, { body: { signal: "TERM" } });
      expect([again.status, again.json.error.code]).toEqual([409, "process_not_running"]);
    });
  });

  describe("stopping", () => {
    it("DELETE ends the whole group (TERM, KILL after the grace) and answers outcome cancelled", async () => {
      const p = await start({
        command: "trap '' TERM; sleep 30 & echo $! > bg.pid; wait",
        restart: { policy: "always" },
      });
      await until(
        () =>
          fs.existsSync(path.join(workspace, "bg.pid")) &&
          fs.readFileSync(path.join(workspace, "bg.pid"), "utf8").endsWith("\n"),
      );
      const t0 = Date.now();
      const res = await backend.api("DELETE", `${PROCESSES}/${p.process_id}?grace_ms=300`);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject({
        process_id: p.process_id,
        state: "exited",
        outcome: "cancelled",
        end_reason: "stopped",
        signal: "SIGKILL",
        restarts: 0,
      });
      expect(groupAlive(p.os_pid)).toBe(false);
      // Stopping an ended process changes nothing.
      const again = await backend.api("DELETE", `${PROCESSES}/${p.process_id}`);
      expect(again.json).toMatchObject({ outcome: "cancelled", end_reason: "stopped" });
    });

    it("DELETE during back-off ends it at once, with the last run's exit", async () => {
      const p = await start({ command: "exit 4", restart: { policy: "on-failure", backoff_ms: 60_000 } });
      await until(async () => (await backend.api("GET", `${PROCESSES}/${p.process_id}`)).json.state === "backoff");
      const res = await backend.api("DELETE", `${PROCESSES}/${p.process_id}`);
      expect(res.json).toMatchObject({ state: "exited", outcome: "cancelled", exit_code: 4, end_reason: "stopped" });
    });

    it("DELETE ?remove=true also deletes the record and its logs", async () => {
      const p = await start({ command: ["sleep", "30"] });
      const res = await backend.api("DELETE", `${PROCESSES}/${p.process_id}?grace_ms=0&remove=true`);
      expect(res.json).toMatchObject({ outcome: "cancelled", removed: true });
      expect((await backend.api("GET", `${PROCESSES}/${p.process_id}`)).status).toBe(404);
      expect(fs.existsSync(path.join(path.dirname(workspace), "processes", p.process_id))).toBe(false);
    });
  });

  describe("requests refused", () => {
    it("answers 404 process_not_found for unknown ids on every route", async () => {
      const pid = "prc_00000000000000000000";
      const calls: Array<[string, string, unknown?]> = [
        ["GET", `${PROCESSES}/${pid}`],
        ["GET", `${PROCESSES}/${pid}/result`],
        ["GET", `${PROCESSES}/${pid}/logs`],
        ["POST", `${PROCESSES}/${pid}/stdin`, { data: "" }],
        ["POST", `${PROCESSES}/${pid}/signal`, { signal: "TERM" }],
        ["DELETE", `${PROCESSES}/${pid}`],
      ];
      for (const [method, url, body] of calls) {
        const res = await backend.api(method, url, body === undefined ? {} : { body });
        expect([method, url, res.status, res.json.error]).toEqual([
          method,
          url,
          404,
          { code: "process_not_found", message: `no process ${pid} in sandbox default`, details: { process_id: pid } },
        ]);
      }
      // A process of another sandbox is not found through this one.
      const other = (await backend.api("POST", "/api/v1/sandbox/create", { body: { name: "elsewhere" } })).json;
      const p = await start({ command: "true" });
      const res = await backend.api("GET", `/api/v1/sandbox/${other.sandbox_id}/processes/${p.process_id}`);
      expect([res.status, res.json.error.code]).toEqual([404, "process_not_found"]);
    });

    it.each([
      [{}, "command"],
      [{ command: [] }, "command"],
      [{ command: "true", working_dir: "/etc" }, "working_dir"],
      [{ command: "true", working_dir: "/workspace/missing" }, "working_dir"],
      [{ command: "true", stdin: "yes" }, "stdin"],
      [{ command: "true", timeout_ms: 0 }, "timeout_ms"],
      [{ command: "true", timeout_ms: 86_400_001 }, "timeout_ms"],
      [{ command: "true", restart: { policy: "sometimes" } }, "restart.policy"],
      [{ command: "true", restart: { max_restarts: -1 } }, "restart.max_restarts"],
      [{ command: "true", restart: { backoff_ms: 0 } }, "restart.backoff_ms"],
      [{ command: "true", restart: { backoff_ms: 500, max_backoff_ms: 100 } }, "restart.max_backoff_ms"],
      [{ command: "true", env: { "A-B": "x" } }, "env"],
      [{ command: "true", name: "no spaces" }, "name"],
    ])("refuses a bad start %j (400, field %s)", async (body, field) => {
      const res = await backend.api("POST", PROCESSES, { body });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field } });
    });

    it("refuses bad log queries, and an offset past the end with 422 invalid_cursor", async () => {
      const p = await start({ command: ["printf", "abc"] });
      await result(p.process_id);
      const logs = `${PROCESSES}/${p.process_id}/logs`;
      for (const [query, field] of [
        ["stream=stdin", "stream"],
        ["offset=-1", "offset"],
        ["limit=0", "limit"],
        ["wait_ms=60001", "wait_ms"],
      ]) {
        const res = await backend.api("GET", `${logs}?${query}`);
        expect([query, res.status, res.json.error.details.field]).toEqual([query, 400, field]);
      }
      const past = await backend.api("GET", `${logs}?offset=4`);
      expect(past.status).toBe(422);
      expect(past.json.error).toMatchObject({ code: "invalid_cursor", details: { field: "offset", end: 3 } });
      const bad = await backend.api("POST", `${PROCESSES}/${p.process_id}/signal`, { body: { signal: "STOP" } });
      expect([bad.status, bad.json.error.details.field]).toEqual([400, "signal"]);
    });
  });

  describe("Idempotency-Key on start", () => {
    it("answers the same process again (as it is now) and refuses the key with another body", async () => {
      const headers = { "idempotency-key": "start-once-1" };
      const first = await start({ command: "echo once >> once.txt" }, headers);
      await result(first.process_id);
      const again = await backend.api("POST", PROCESSES, { body: { command: "echo once >> once.txt" }, headers });
      expect(again.status).toBe(201);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.json).toMatchObject({
        process_id: first.process_id,
        state: "exited",
        idempotency_key: "start-once-1",
      });
      expect(fs.readFileSync(path.join(workspace, "once.txt"), "utf8")).toBe("once\n");
      const other = await backend.api("POST", PROCESSES, { body: { command: "echo twice" }, headers });
      expect([other.status, other.json.error.code]).toEqual([422, "idempotency_key_reused"]);
      const found = await backend.api("GET", `${PROCESSES}?idempotency_key=start-once-1`);
      expect(found.json.processes.map((x: { process_id: string }) => x.process_id)).toEqual([first.process_id]);
    });
  });
});
