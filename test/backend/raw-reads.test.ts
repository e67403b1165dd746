// Raw output reads: GET …/output and …/logs asked with `Accept: application/octet-stream`
// answer the bytes themselves (no base64, no JSON), with where they are in Sbx-* headers.
// Without that Accept the JSON answers are as before.

import fs from "node:fs";
import path from "node:path";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXECUTE, startTestBackend, type TestBackend, workspaceOf } from "./support.js";
import { executionPath } from "./stream-support.js";

let b: TestBackend;
let agent: Agent;
let workspace: string;
beforeAll(async () => {
  b = await startTestBackend();
  agent = new Agent({ connect: { socketPath: b.socketPath } });
  workspace = await workspaceOf(b);
});
afterAll(async () => {
  await agent.close();
  await b.stop();
});

async function rawGet(urlPath: string) {
  const res = await request(`http://localhost${urlPath}`, {
    dispatcher: agent,
    headers: { accept: "application/octet-stream" },
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body };
}

describe("GET …/executions/{eid}/output, raw", () => {
  it("answers the bytes as they are, offsets and eof in headers, any range of them", async () => {
    // 3 MB that are not UTF-8: past the record's tail; the file in the workspace is the truth.
    const res = await b.api("POST", EXECUTE, {
      body: { command: "head -c 3000000 /dev/urandom > out.bin && cat out.bin" },
    });
    expect(res.status).toBe(200);
    const eid = (res.json as { execution_id: string }).execution_id;
    const want = fs.readFileSync(path.join(workspace, "out.bin"));
    const url = executionPath(eid, "/output");

    const all = await rawGet(`${url}?stream=stdout`);
    expect(all.status).toBe(200);
    expect(all.headers["content-type"]).toBe("application/octet-stream");
    expect(all.headers).toMatchObject({
      "sbx-stream": "stdout",
      "sbx-offset": "0",
      "sbx-next-offset": String(want.length),
      "sbx-eof": "true",
      "sbx-stream-bytes": String(want.length),
      "content-length": String(want.length),
    });
    expect(all.body.equals(want)).toBe(true);

    const part = await rawGet(`${url}?stream=stdout&offset=1000&limit=5000`);
    expect(part.headers).toMatchObject({ "sbx-offset": "1000", "sbx-next-offset": "6000", "sbx-eof": "false" });
    expect(part.body.equals(want.subarray(1000, 6000))).toBe(true);

    const end = await rawGet(`${url}?stream=stdout&offset=${want.length}`);
    expect(end.headers).toMatchObject({ "sbx-next-offset": String(want.length), "sbx-eof": "true" });
    expect(end.body.length).toBe(0);

    const empty = await rawGet(`${url}?stream=stderr`);
    expect(empty.headers).toMatchObject({ "sbx-stream": "stderr", "sbx-next-offset": "0", "sbx-eof": "true" });

    // Past the end: the documented JSON error, raw or not.
    const past = await rawGet(`${url}?stream=stdout&offset=${want.length + 1}`);
    expect(past.status).toBe(422);
    expect(JSON.parse(past.body.toString("utf8")).error.code).toBe("invalid_cursor");

    // Asked for JSON (the default), the answer is the base64 chunk, at most 4 MiB.
    const json = (await b.api("GET", `${url}?stream=stdout&offset=0&limit=100`)).json as { data: string };
    expect(Buffer.from(json.data, "base64").equals(want.subarray(0, 100))).toBe(true);
  });
});

describe("GET …/processes/{pid}/logs, raw", () => {
  it("answers the bytes with offset, next offset, eof, rotation and generation in headers", async () => {
    const started = await b.api("POST", "/api/v1/sandbox/default/processes", {
      body: { command: ["sh", "-c", "printf 'a\\377b\\000c'; printf 'tail'"] },
    });
    expect(started.status).toBe(201);
    const pid = (started.json as { process_id: string }).process_id;
    const url = `/api/v1/sandbox/default/processes/${pid}/logs`;
    // Wait for the end server-side: the result long-polls until it is complete.
    await b.api("GET", `/api/v1/sandbox/default/processes/${pid}/result?wait_ms=20000`);
    const want = Buffer.from([0x61, 0xff, 0x62, 0x00, 0x63, ...Buffer.from("tail")]);

    const all = await rawGet(`${url}?stream=stdout&offset=0`);
    expect(all.status).toBe(200);
    expect(all.headers["content-type"]).toBe("application/octet-stream");
    expect(all.headers).toMatchObject({
      "sbx-stream": "stdout",
      "sbx-offset": "0",
      "sbx-next-offset": String(want.length),
      "sbx-eof": "true",
      "sbx-rotated": "false",
      "sbx-oldest-offset": "0",
      "sbx-generation": "0",
    });
    expect(all.body.equals(want)).toBe(true);

    const part = await rawGet(`${url}?stream=stdout&offset=2&limit=3`);
    expect(part.headers).toMatchObject({ "sbx-offset": "2", "sbx-next-offset": "5", "sbx-eof": "false" });
    expect(part.body.equals(want.subarray(2, 5))).toBe(true);
  });

  it("reads up to 64 MiB in one raw read, across segments, streamed from the files (JSON stays within 8 MiB)", async () => {
    const size = 20 * 1024 * 1024;
    const started = await b.api("POST", "/api/v1/sandbox/default/processes", {
      body: { command: ["sh", "-c", `head -c ${size} /dev/urandom | tee log20.bin`] },
    });
    expect(started.status).toBe(201);
    const pid = (started.json as { process_id: string }).process_id;
    const url = `/api/v1/sandbox/default/processes/${pid}/logs`;
    await b.api("GET", `/api/v1/sandbox/default/processes/${pid}/result?wait_ms=60000`);
    const want = fs.readFileSync(path.join(workspace, "log20.bin"));
    expect(want.length).toBe(size);

    const all = await rawGet(`${url}?stream=stdout&offset=1000&limit=${64 * 1024 * 1024}`);
    expect(all.status).toBe(200);
    expect(all.headers).toMatchObject({
      "sbx-offset": "1000",
      "sbx-next-offset": String(size),
      "sbx-eof": "true",
      "content-length": String(size - 1000),
    });
    expect(all.body.equals(want.subarray(1000))).toBe(true);

    const over = await rawGet(`${url}?stream=stdout&limit=${64 * 1024 * 1024 + 1}`);
    expect(over.status).toBe(400);
    const json = await b.api("GET", `${url}?stream=stdout&limit=${8 * 1024 * 1024 + 1}`);
    expect(json.status).toBe(400);
  });
});
