import { describe, expect, it } from "vitest";
import type { BoxSummary } from "../../../src/engine/engine.js";
import { matchBox } from "../../../src/cli/session-target.js";

const box = (session: string, id: string): BoxSummary => ({
  id,
  name: `drydock-${session}`,
  labels: { "drydock.session": session },
  state: "running",
  createdAt: new Date(0),
});

const boxes = [
  box("3b65aa000001", "c0ffee0000000000000000000000000000000000000000000000000000000001"),
  box("3b65bb000002", "c0ffee1100000000000000000000000000000000000000000000000000000002"),
  box("91d2cc000003", "deadbeef00000000000000000000000000000000000000000000000000000003"),
];

describe("matchBox (sessions rm)", () => {
  it("takes a session id, a unique prefix of one, or a unique prefix of a box id", () => {
    expect(matchBox("3b65aa000001", boxes).labels["drydock.session"]).toBe("3b65aa000001");
    expect(matchBox("3b65b", boxes).labels["drydock.session"]).toBe("3b65bb000002");
    expect(matchBox("91", boxes).labels["drydock.session"]).toBe("91d2cc000003");
    expect(matchBox("deadbeef", boxes).labels["drydock.session"]).toBe("91d2cc000003");
    expect(matchBox("c0ffee11", boxes).labels["drydock.session"]).toBe("3b65bb000002");
  });

  it("never takes more than one box: an empty, ambiguous or unknown id is refused", () => {
    expect(() => matchBox("", boxes)).toThrow(/"" is not a session id/);
    expect(() => matchBox("3b65", boxes)).toThrow(/3b65 matches 2 sessions \(3b65aa000001, 3b65bb000002\)/);
    expect(() => matchBox("c0ffee", boxes)).toThrow(/c0ffee matches 2 boxes/);
    expect(() => matchBox("0", boxes)).toThrow(/no session 0/);
    expect(() => matchBox("*", boxes)).toThrow(/is not a session id/);
  });
});
