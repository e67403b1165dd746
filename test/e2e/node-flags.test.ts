// sbx on Node: node reads some flags of its own (--env-file) even after the script's
// path, and exits 9 when that file is missing. The shebang's `--` and bin/sbx keep
// every flag sbx's: a missing --env-file is sbx's 125, nothing dispatched.

import { expect, it } from "vitest";
import { lines, makeHome, removeHome, runSbx } from "../support/cli.js";
import { startMisbehavingServer } from "../support/misbehaving-server.js";

it("node bin/sbx exec --env-file MISSING is sbx's refusal (125), not node's exit 9", async (t) => {
  const home = makeHome("sbx-e2e-node-flags-");
  t.onTestFinished(() => removeHome(home));
  const server = await startMisbehavingServer();
  t.onTestFinished(() => server.close());
  const res = await runSbx(
    ["exec", "--api-url", server.url, "--env-file", "/nonexistent/sbx.env", "--", "echo", "hi"],
    { home },
  );
  expect(res.code, res.stderr).toBe(125);
  expect(res.stdout).toBe("");
  expect(lines(res.stderr)[0]).toMatch(/--env-file \/nonexistent\/sbx\.env: no such file$/);
  expect(server.requests).toHaveLength(0);
});
