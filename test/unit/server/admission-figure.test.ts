import { describe, expect, it } from "vitest";
import {
  admissionFigure,
  defaultReserveMiB,
  HOST_SIDE_MIB,
  NEW_BOX_MIB,
  refusal,
  type AdmissionInput,
} from "../../../src/server/admission-figure.js";

const GiB = 1024;
const idle = { usedMiB: 12, limitMiB: 2 * GiB };
const base: AdmissionInput = {
  hostMiB: 24 * GiB,
  reserveMiB: 6 * GiB,
  boxes: [],
  starting: 0,
  newBoxLimitMiB: 2 * GiB,
  held: 0,
};
const perNew = NEW_BOX_MIB + HOST_SIDE_MIB;

describe("admissionFigure", () => {
  it("admits by what boxes use, not by their limits: a 24 GiB host fits far more than 11 idle sessions", () => {
    const boxes = Array.from({ length: 100 }, () => idle);
    const figure = admissionFigure({ ...base, boxes, held: 100 });
    const used = 100 * (idle.usedMiB + HOST_SIDE_MIB);
    expect(figure.usedMiB).toBe(used);
    expect(figure.budgetMiB).toBe(18 * GiB);
    expect(figure.fit).toBe(Math.floor((18 * GiB - used) / perNew));
    expect(figure.fit).toBeGreaterThan(100);
    expect(figure.by).toBe("memory");
  });

  it("counts a box at most at its limit, and a starting session at a new box", () => {
    const greedy = { usedMiB: 5_000, limitMiB: 2 * GiB };
    const figure = admissionFigure({ ...base, boxes: [greedy], starting: 3 });
    expect(figure.usedMiB).toBe(2 * GiB + HOST_SIDE_MIB + 3 * perNew);
  });

  it("counts a new box at its limit when that is below the estimate", () => {
    expect(admissionFigure({ ...base, newBoxLimitMiB: 16 }).newSessionMiB).toBe(16 + HOST_SIDE_MIB);
  });

  it("refuses once the boxes and the reserve fill the host, naming memory and the fix", () => {
    const input = { ...base, hostMiB: 6 * GiB + 200, boxes: [{ usedMiB: 150, limitMiB: 2 * GiB }], held: 1 };
    const figure = admissionFigure(input);
    expect(figure.fit).toBe(0);
    expect(refusal(figure, input)).toMatch(
      /^no memory for another session: the boxes of this server \(1\) use 155 MiB of the 200 MiB sessions may use \(6,344 MiB of host memory less a 6,144 MiB reserve\), and a new session needs 69 MiB; .*session_destroy.*--memory-reserve-mb/,
    );
    // The same box using less leaves room again.
    const after = { ...input, boxes: [{ usedMiB: 20, limitMiB: 2 * GiB }] };
    expect(admissionFigure(after).fit).toBe(2);
    expect(refusal(admissionFigure(after), after)).toBeUndefined();
  });

  it("keeps --max-sessions as a cap when given, and says it binds", () => {
    const input = { ...base, boxes: [idle, idle], held: 1, starting: 1, maxSessions: 3 };
    const figure = admissionFigure(input);
    expect(figure).toMatchObject({ fit: 1, by: "max-sessions" });
    expect(figure.why).toMatch(
      /^1 more session fit, bound by --max-sessions: .*--max-sessions 3 allows 1 more/,
    );
    const full = { ...input, held: 2 };
    expect(refusal(admissionFigure(full), full)).toMatch(
      /^there are already 3 sessions, the most this server runs at once \(--max-sessions 3\); .*session_destroy.*raise --max-sessions/,
    );
  });

  it("says how many more fit and why", () => {
    expect(admissionFigure({ ...base, boxes: [idle], held: 1 }).why).toBe(
      `${Math.floor((18 * GiB - 17) / perNew)} more sessions fit: the boxes of this server (1) use 17 MiB of the 18,432 MiB sessions may use (24,576 MiB of host memory less a 6,144 MiB reserve, --memory-reserve-mb; each box counted at what it uses, at most its limit, plus 5 MiB on the host), and a new session counts 69 MiB until its box is measured`,
    );
  });

  it("never fits a negative number, even with a reserve above the host's memory", () => {
    expect(admissionFigure({ ...base, reserveMiB: 30 * GiB })).toMatchObject({ fit: 0, budgetMiB: 0 });
  });
});

describe("defaultReserveMiB", () => {
  it("is a quarter of the host, at least 1 GiB", () => {
    expect(defaultReserveMiB(24 * GiB)).toBe(6 * GiB);
    expect(defaultReserveMiB(2 * GiB)).toBe(GiB);
  });
});
