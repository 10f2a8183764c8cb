import { describe, expect, it } from "vitest";
import { formatAge, sessionRow, sessionTableRows, type RowFacts } from "../../../src/cli/session-rows.js";
import { textTable } from "../../../src/cli/text-table.js";
import type { BoxSummary } from "../../../src/engine/engine.js";

const now = new Date("2026-11-21T12:00:00Z");

function box(id: string, labels: Record<string, string>): BoxSummary {
  return { id: id.padEnd(64, "0"), name: `drydock-${id}`, labels, state: "running", createdAt: now };
}

const facts = (repos: Record<string, string> = {}, alive: Record<string, boolean> = {}): RowFacts => ({
  now,
  repoOf: (b) => repos[b.labels["drydock.session"] ?? ""],
  ownerAlive: (owner) => alive[owner],
});

describe("sessions list rows", () => {
  it("says what each box is, how old, whose, and whether its owner runs", () => {
    const session = box("aaaaaaaaaaaa", {
      "drydock.session": "111111111111",
      "drydock.owner": "vm/42/100",
      "drydock.created": "2026-11-21T11:57:00Z",
      "drydock.state": "/state",
    });
    const warm = box("bbbbbbbbbbbb", {
      "drydock.session": "222222222222",
      "drydock.pool": "warm",
      "drydock.owner": "vm/42/100",
      "drydock.created": "2026-11-21T11:59:30Z",
    });
    const evalBox = box("cccccccccccc", {
      "drydock.session": "333333333333",
      "drydock.eval.task": "calc-1",
      "drydock.owner": "vm/7/5",
      "drydock.created": "2026-11-19T12:00:00Z",
    });
    const remote = box("dddddddddddd", {
      "drydock.session": "444444444444",
      "drydock.owner": "other/9/9",
      "drydock.created": "2026-11-21T09:00:00Z",
    });
    const rows = [session, warm, evalBox, remote].map((b) =>
      sessionRow(b, facts({ "111111111111": "/src/app" }, { "vm/42/100": true, "vm/7/5": false })),
    );
    expect(rows[0]).toMatchObject({
      session: "111111111111",
      box: "aaaaaaaaaaaa",
      age_s: 180,
      repo: "/src/app",
      kind: "session",
      alive: true,
      orphan: false,
      state_dir: "/state",
    });
    expect(rows[1]).toMatchObject({ kind: "warm", repo: null, pool: true, age_s: 30 });
    expect(rows[2]).toMatchObject({ kind: "eval", eval_task: "calc-1", alive: false, orphan: true });
    expect(rows[3]).toMatchObject({ alive: null, orphan: false });
    expect(textTable(sessionTableRows(rows))).toBe(
      [
        "SESSION       BOX           STATE    AGE  OWNER    ALIVE  REPOSITORY",
        "333333333333  cccccccccccc  running  2d   vm/7     no     (eval task calc-1)",
        "444444444444  dddddddddddd  running  3h   other/9  ?      -",
        "111111111111  aaaaaaaaaaaa  running  3m   vm/42    yes    /src/app",
        "222222222222  bbbbbbbbbbbb  running  30s  vm/42    yes    (warm pool, idle)",
        "",
      ].join("\n"),
    );
  });

  it("a box without a readable owner has no live owner", () => {
    expect(sessionRow(box("e", { "drydock.session": "5" }), facts())).toMatchObject({
      alive: false,
      orphan: true,
    });
  });

  it("formats ages in the largest unit that fits", () => {
    expect([0, 59, 60, 3599, 3600, 86_399, 86_400].map(formatAge)).toEqual([
      "0s",
      "59s",
      "1m",
      "59m",
      "1h",
      "23h",
      "1d",
    ]);
  });
});
