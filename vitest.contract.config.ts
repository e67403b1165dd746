import { defineConfig } from "vitest/config";

// The validating run (npm run test:contract): holds the traffic the test suite recorded
// (SBX_WIRE_RECORD=DIR npm test) to the OpenAPI document. docs/protocol.md, "The OpenAPI document".
export default defineConfig({
  test: {
    include: ["test/contract/*.contract.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
});
