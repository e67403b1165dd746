// Transport failures in sbx's words (src/platform/transport-errors.ts): the runtimes'
// names as one errno code, one sentence for each, the runtime's error kept as cause.

import { describe, expect, it } from "vitest";
import { inSbxWords, transportCode, transportWords } from "../../src/platform/transport-errors.js";

describe("transport errors in sbx's words", () => {
  it.each([
    [{ code: "ECONNRESET", message: "read ECONNRESET" }, "ECONNRESET"],
    [{ code: "ConnectionRefused" }, "ECONNREFUSED"],
    [{ code: "FailedToOpenSocket" }, "ENOENT"],
    [{ code: "ConnectionClosed" }, "ECONNRESET"],
    [{ cause: { code: "UND_ERR_SOCKET" } }, "UND_ERR_SOCKET"],
    [{}, "UNKNOWN"],
  ])("%o is %s", (err, code) => {
    expect(transportCode(err)).toBe(code);
  });

  it("says Bun's ECONNRESET without Bun's advice, keeping the code, the cause and the not-sent mark", () => {
    const bun = Object.assign(
      new Error(
        "The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()",
      ),
      { code: "ECONNRESET", notSent: true },
    );
    const said = inSbxWords(bun) as Error & { code: string; notSent?: boolean };
    expect(said.message).toBe("the connection was closed before the answer was complete (ECONNRESET)");
    expect(said.code).toBe("ECONNRESET");
    expect(said.notSent).toBe(true);
    expect(said.cause).toBe(bun);
  });

  it("leaves an abort as it is (its caller knows why), and names what it does not know by its code", () => {
    const abort = Object.assign(new Error("The operation was aborted"), { name: "AbortError" });
    expect(inSbxWords(abort)).toBe(abort);
    expect(transportWords("EWHATEVER")).toBe("the connection failed (EWHATEVER)");
    expect(transportWords("CERT_HAS_EXPIRED")).toBe("the backend's TLS certificate was refused (CERT_HAS_EXPIRED)");
  });
});
