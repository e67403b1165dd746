import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  b64,
  describeIsolations,
  EXECUTE,
  processesWithArg,
  seenFrom,
  sharedBackend,
  type TestBackend,
  uniqueSleep,
  until,
} from "./support.js";

describeIsolations("executions", (isolation) => {
  let backend: TestBackend;
  let workspace: string;
  let seen: (hostPath: string) => string;
  sharedBackend(
    (b, dir) => {
      backend = b;
      workspace = dir;
      seen = seenFrom(isolation, dir);
    },
    {},
    isolation,
  );

  const run = (body: unknown, headers?: Record<string, string>) =>
    backend.api("POST", EXECUTE, { body, ...(headers && { headers }) });

  describe("execute", () => {
    it("runs argv without a shell and answers the record", async () => {
      const res = await run({ command: ["echo", "hi", "$HOME"] });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        execution_id: expect.stringMatching(/^exe_[0-9a-hjkmnp-tv-z]{16}$/),
        sandbox_id: expect.stringMatching(/^sbx_/),
        boot: expect.stringMatching(/^boot_[0-9a-f]{16}$/),
        idempotency_key: null,
        command: ["echo", "hi", "$HOME"],
        working_dir: "/workspace",
        timeout: 120000,
        outcome: "succeeded",
        exit_code: 0,
        signal: null,
        system_error: null,
        end_reason: null,
        image_digest: null,
        record_pending: false,
        cancel_requested: false,
        stdout: "hi $HOME\n",
        stderr: "",
        stdout_bytes: 9,
        stderr_bytes: 0,
        stdout_truncated: false,
        stderr_truncated: false,
        created_at: expect.any(String),
        started_at: expect.any(String),
        finished_at: expect.any(String),
        duration_ms: expect.any(Number),
        // started, output, exit, end
        last_event_id: 4,
        recovery: null,
        // What the command used, or why it was not measured (docs/operations.md, "Per-command usage").
        usage: expect.objectContaining({ measured_by: expect.any(String), limits_hit: [] }),
      });
    });

    it("runs a string through /bin/sh -c in the workspace", async () => {
      const res = await run({ command: "echo $((1+2)) && pwd && echo err >&2" });
      expect(res.json).toMatchObject({
        outcome: "succeeded",
        exit_code: 0,
        stdout: `3\n${seen(workspace)}\n`,
        stderr: "err\n",
      });
    });

    it("reports a non-zero exit as failed with its code", async () => {
      expect((await run({ command: "exit 3" })).json).toMatchObject({ outcome: "failed", exit_code: 3, signal: null });
    });

    it("reports death by signal with the signal name and no exit code", async () => {
      // Under bwrap too: the sandbox's init, the command's parent, reports it (docs/drivers.md).
      expect((await run({ command: "kill -9 $$" })).json).toMatchObject({
        outcome: "failed",
        exit_code: null,
        signal: "SIGKILL",
      });
    });

    it("answers a missing program like a shell, exit 127", async () => {
      const res = await run({ command: ["no-such-program-sbx"] });
      expect(res.json).toMatchObject({
        outcome: "failed",
        exit_code: 127,
        stderr: "sbx: no-such-program-sbx: command not found\n",
      });
    });

    it("ends the whole process group at the timeout", async () => {
      // Hour-long sleeps: an answer that waited for them to end would come long after the test's timeout.
      const [a, b] = [uniqueSleep(3600), uniqueSleep(3600)];
      const res = await run({ command: `sleep ${a} & sleep ${b}; wait`, timeout: 1000 });
      expect(res.json).toMatchObject({ outcome: "timed_out", exit_code: null, signal: "SIGTERM" });
      // The background sleep (a grandchild of the request) is gone too.
      await until(
        () => processesWithArg(a).length + processesWithArg(b).length === 0,
        3000,
        "the process group to end",
      );
    });

    it("answers from the leader's exit when a background job holds the output pipes", async () => {
      const bg = uniqueSleep(3600);
      // A timeout far beyond the leader's life (it only echoes) and far short of the background
      // job's hour: an answer that waited for the pipes to close would say timed_out.
      const res = await run({ command: `sleep ${bg} & echo started`, timeout: 60_000 });
      // Succeeded, not timed_out: answered at the leader's exit, before the timeout, not when the pipes closed.
      expect(res.json).toMatchObject({ outcome: "succeeded", exit_code: 0, signal: null, stdout: "started\n" });
      // The background job was killed with the rest of the group.
      await until(() => processesWithArg(bg).length === 0, 3000, "the background job to end");
    });

    it("refuses a working_dir outside /workspace, and one that does not exist", async () => {
      for (const dir of ["/etc", "../x", "/workspace/../etc"]) {
        const res = await run({ command: ["pwd"], working_dir: dir });
        expect(res.status).toBe(400);
        expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field: "working_dir" } });
      }
      const missing = await run({ command: ["pwd"], working_dir: "/workspace/missing" });
      expect(missing.status).toBe(400);
      expect(missing.json.error.details.field).toBe("working_dir");

      fs.mkdirSync(path.join(workspace, "sub"), { recursive: true });
      const sub = await run({ command: ["pwd"], working_dir: "sub" });
      expect(sub.json).toMatchObject({
        working_dir: "/workspace/sub",
        stdout: `${seen(path.join(workspace, "sub"))}\n`,
      });
    });

    it("refuses a working_dir that leads outside /workspace through a symlink", async () => {
      fs.symlinkSync("../../..", path.join(workspace, "up"));
      fs.mkdirSync(path.join(workspace, "real"), { recursive: true });
      fs.symlinkSync("real", path.join(workspace, "inside"));
      for (const dir of ["/workspace/up", "/workspace/up/sandboxes", "up"]) {
        const res = await run({ command: ["pwd"], working_dir: dir });
        expect(res.status, dir).toBe(400);
        expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field: "working_dir" } });
      }
      // A symlink that stays inside the workspace is fine: the command runs in its target.
      const inside = await run({ command: ["pwd"], working_dir: "/workspace/inside" });
      expect(inside.json).toMatchObject({
        outcome: "succeeded",
        stdout: `${seen(fs.realpathSync(path.join(workspace, "real")))}\n`,
      });
    });

    it("validates the request with details.field", async () => {
      for (const [body, field] of [
        [{}, "command"],
        [{ command: [] }, "command"],
        [{ command: "true", timeout: 10 }, "timeout"],
        [{ command: "true", env: { "1X": "v" } }, "env"],
        [{ command: ["echo", "a\u0000b"] }, "command"],
        [{ command: "true", stdin: "***" }, "stdin"],
        [{ command: "true", stream: "yes" }, "stream"],
      ] as const) {
        const res = await run(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field } });
      }
      const missing = await backend.api("POST", "/api/v1/sandbox/nope/execute", { body: { command: "true" } });
      expect(missing.status).toBe(404);
      expect(missing.json.error.code).toBe("sandbox_not_found");
    });

    it("writes stdin once and closes it; otherwise stdin is /dev/null", async () => {
      const bytes = "line one\nline two\n\u00e9";
      expect((await run({ command: ["cat"], stdin: b64(bytes) })).json.stdout).toBe(bytes);
      expect((await run({ command: ["cat"] })).json).toMatchObject({ outcome: "succeeded", stdout: "" });
    });

    it("keeps the last 1 MiB of output, with the full byte count", async () => {
      const res = await run({ command: "head -c 1500000 /dev/zero | tr '\\0' x; printf END; printf e >&2" });
      expect(res.json).toMatchObject({
        outcome: "succeeded",
        stdout_bytes: 1500003,
        stdout_truncated: true,
        stderr: "e",
        stderr_bytes: 1,
        stderr_truncated: false,
      });
      expect(res.json.stdout).toHaveLength(1024 * 1024);
      expect(res.json.stdout.endsWith("xxEND")).toBe(true);
    });

    it("merges the request env over a small clean base", async () => {
      const res = await run({
        command: 'echo "$FOO|$HOME|$LANG|$PATH|$SBX_SANDBOX_ID|$SBX_EXECUTION_ID|$(printenv VITEST || echo unset)"',
        env: { FOO: "bar", LANG: "en_US.UTF-8" },
      });
      const [foo, home, lang, pathVar, sandboxId, executionId, leaked] = res.json.stdout.trim().split("|");
      expect({ foo, home, lang, pathVar, leaked }).toEqual({
        foo: "bar",
        home: seen(workspace),
        lang: "en_US.UTF-8",
        pathVar: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        leaked: "unset",
      });
      expect(sandboxId).toBe(res.json.sandbox_id);
      expect(executionId).toBe(res.json.execution_id);
    });
  });

  describe("reading executions", () => {
    it("gets one, waits for it, and says wait_timeout while it runs", async () => {
      const done = await run({ command: ["true"] });
      const get = await backend.api("GET", `/api/v1/sandbox/default/executions/${done.json.execution_id}`);
      expect(get.json).toEqual(done.json);

      // A running one: started without waiting for its answer.
      // It runs until the test lets it end (a file in its workspace), however slow the machine.
      const gate = path.join(workspace, "let-it-end");
      const pending = run({ command: "while [ ! -e let-it-end ]; do sleep 0.05; done; echo late", timeout: 120_000 });
      const running = await until(async () => {
        const list = await backend.api("GET", "/api/v1/sandbox/default/executions?outcome=pending");
        return list.json.executions[0];
      });
      expect(running.outcome).toBe("pending");
      const url = `/api/v1/sandbox/default/executions/${running.execution_id}`;
      const waited = await backend.api("GET", `${url}?wait_ms=100`);
      expect(waited.json).toMatchObject({ outcome: "pending", wait_timeout: true });
      const list = await backend.api("GET", "/api/v1/sandbox/default/executions?limit=1");
      expect(list.json.live_count).toBe(1);
      fs.writeFileSync(gate, "");
      const finished = await backend.api("GET", `${url}?wait_ms=50000`);
      expect(finished.json).toMatchObject({ outcome: "succeeded", stdout: "late\n" });
      expect(finished.json.wait_timeout).toBeUndefined();
      expect((await pending).json.execution_id).toBe(running.execution_id);
      fs.rmSync(gate);

      for (const bad of ["-1", "50001", "abc"]) {
        const res = await backend.api("GET", `${url}?wait_ms=${bad}`);
        expect(res.status).toBe(400);
        expect(res.json.error.details.field).toBe("wait_ms");
      }
      const missing = await backend.api("GET", "/api/v1/sandbox/default/executions/exe_nope");
      expect(missing.status).toBe(404);
      expect(missing.json.error.code).toBe("execution_not_found");
    });

    it("lists newest first with a cursor and filters", async () => {
      await backend.api("POST", "/api/v1/sandbox/create", { body: { name: "lister", isolation } });
      const ids: string[] = [];
      for (const code of [0, 1, 0]) {
        const res = await backend.api("POST", "/api/v1/sandbox/lister/execute", { body: { command: `exit ${code}` } });
        ids.push(res.json.execution_id);
      }
      const first = await backend.api("GET", "/api/v1/sandbox/lister/executions?limit=2");
      expect(first.json.executions.map((e: { execution_id: string }) => e.execution_id)).toEqual([ids[2], ids[1]]);
      expect(first.json.live_count).toBe(0);
      expect(first.json.next_cursor).toEqual(expect.any(String));
      const second = await backend.api(
        "GET",
        `/api/v1/sandbox/lister/executions?limit=2&cursor=${first.json.next_cursor}`,
      );
      expect(second.json.executions.map((e: { execution_id: string }) => e.execution_id)).toEqual([ids[0]]);
      expect(second.json.next_cursor).toBeNull();
      const failed = await backend.api("GET", "/api/v1/sandbox/lister/executions?outcome=failed");
      expect(failed.json.executions.map((e: { execution_id: string }) => e.execution_id)).toEqual([ids[1]]);
      for (const q of ["limit=0", "limit=201", "cursor=x", "outcome=done", "idempotency_key=a%20b"]) {
        expect((await backend.api("GET", `/api/v1/sandbox/lister/executions?${q}`)).status, q).toBe(400);
      }
    });

    it("leaves the output out of list items, which GET of one execution answers", async () => {
      await backend.api("POST", "/api/v1/sandbox/create", { body: { name: "bulky", isolation } });
      const res = await backend.api("POST", "/api/v1/sandbox/bulky/execute", {
        body: { command: "head -c 300000 /dev/zero | tr '\\0' x; echo err >&2" },
        headers: { "idempotency-key": "bulky-1" },
      });
      expect(res.json).toMatchObject({ outcome: "succeeded", stdout_bytes: 300000, stderr: "err\n" });
      const list = await backend.api("GET", "/api/v1/sandbox/bulky/executions?idempotency_key=bulky-1");
      expect(list.text.length).toBeLessThan(10_000);
      expect(list.json.executions).toEqual([
        expect.objectContaining({
          execution_id: res.json.execution_id,
          idempotency_key: "bulky-1",
          outcome: "succeeded",
          exit_code: 0,
          stdout: "",
          stderr: "",
          stdout_bytes: 300000,
          stderr_bytes: 4,
          stdout_truncated: false,
          stderr_truncated: false,
        }),
      ]);
      const one = await backend.api("GET", `/api/v1/sandbox/bulky/executions/${res.json.execution_id}`);
      expect(one.json.stdout).toHaveLength(300000);
      expect(one.json.stderr).toBe("err\n");
    });

    it("refuses to delete a sandbox while something runs in it", async () => {
      await backend.api("POST", "/api/v1/sandbox/create", { body: { name: "busy", isolation } });
      const pending = backend.api("POST", "/api/v1/sandbox/busy/execute", { body: { command: "sleep 0.5" } });
      await until(async () => {
        const list = await backend.api("GET", "/api/v1/sandbox/busy/executions");
        return list.json.live_count === 1;
      });
      const refused = await backend.api("DELETE", "/api/v1/sandbox/busy");
      expect(refused.status).toBe(409);
      expect(refused.json.error.code).toBe("sandbox_busy");
      await pending;
      expect((await backend.api("DELETE", "/api/v1/sandbox/busy")).status).toBe(200);
    });
  });
});
