// sandbox create -p/--publish, as docker -p writes it: PORT, HOST_PORT:PORT, IP:HOST_PORT:PORT.

import { describe, expect, it } from "vitest";
import { parsePublish } from "../../src/cli/commands/sandbox/create.js";

describe("--publish", () => {
  it.each([
    ["8000", { port: 8000, host_port: 0 }],
    ["0:8000", { port: 8000, host_port: 0 }],
    ["8080:8000", { port: 8000, host_port: 8080 }],
    ["127.0.0.1:8080:8000", { port: 8000, host_port: 8080, host_ip: "127.0.0.1" }],
    ["0.0.0.0:0:22", { port: 22, host_port: 0, host_ip: "0.0.0.0" }],
    ["[::1]:8080:8000", { port: 8000, host_port: 8080, host_ip: "::1" }],
  ])("reads %s", (text, want) => {
    expect(parsePublish(text)).toEqual(want);
  });

  it.each(["", "0", "8000:", ":8000", "65536", "70000:80", "127.0.0.1:8000", "a:1", "1:2:3:4", "[::1]:80"])(
    "refuses %j, saying the forms",
    (text) => {
      expect(() => parsePublish(text)).toThrow(/--publish takes PORT, HOST_PORT:PORT or IP:HOST_PORT:PORT/);
    },
  );
});
