import { describe, expect, it } from "vitest";
import { counted } from "../../src/cli/render/words.js";

describe("counted", () => {
  it("says one in the singular and every other count in the plural", () => {
    expect(counted(1, "entry", "entries")).toBe("1 entry");
    expect(counted(0, "entry", "entries")).toBe("0 entries");
    expect(counted(2, "process", "processes")).toBe("2 processes");
    expect(counted(1, "execution")).toBe("1 execution");
    expect(counted(3, "execution")).toBe("3 executions");
  });
});
