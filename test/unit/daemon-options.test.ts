// The daemon's job settings: --job-concurrency and --job-output-max, checked before it starts.

import { describe, expect, it } from "vitest";
import { parseDaemonRunOptions } from "../../src/cli/commands/daemon/run.js";

describe("sbx daemon run job settings", () => {
  it("takes a concurrency and an output size", () => {
    expect(parseDaemonRunOptions({ jobConcurrency: "8", jobOutputMax: "2MiB" })).toMatchObject({
      jobConcurrency: 8,
      jobOutputMaxBytes: 2 * 1024 * 1024,
    });
    expect(parseDaemonRunOptions({})).toMatchObject({ jobConcurrency: undefined, jobOutputMaxBytes: undefined });
  });

  it.each([
    [{ jobConcurrency: "0" }, "--job-concurrency"],
    [{ jobConcurrency: "two" }, "--job-concurrency"],
    [{ jobOutputMax: "12" }, "at least 1k"],
    [{ jobOutputMax: "lots" }, "is not a size"],
  ])("refuses %j", (raw, words) => {
    expect(() => parseDaemonRunOptions(raw)).toThrow(words);
  });
});
