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
  it("gives a session's own age, not that of the warm box it took", () => {
    const pooled = box("aaaaaaaaaaaa", {
      "drydock.session": "111111111111",
      "drydock.pool": "warm",
      "drydock.created": "2026-11-21T11:00:00Z",
    });
    const started = { ...facts({ "111111111111": "/src/app" }), startedOf: () => "2026-11-21T11:59:20Z" };
    expect(sessionRow(pooled, started)).toMatchObject({ created: "2026-11-21T11:59:20Z", age_s: 40 });
    // No record (an idle warm box): the box's own age.
    expect(sessionRow(pooled, { ...facts(), startedOf: () => undefined })).toMatchObject({ age_s: 3600 });
  });

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

  it("a kept session whose owner died is no orphan until its time passes; an idle warm box is never kept", () => {
    const labels = {
      "drydock.session": "666666666666",
      "drydock.owner": "vm/8/1",
      "drydock.created": "2026-11-21T11:00:00Z",
      "drydock.kept-until": String(Date.parse("2026-11-22T11:00:00Z") / 1000),
    };
    const kept = sessionRow(
      box("ffffffffffff", labels),
      facts({ "666666666666": "/src/app" }, { "vm/8/1": false }),
    );
    expect(kept).toMatchObject({ alive: false, orphan: false, kept_until: "2026-11-22T11:00:00.000Z" });
    expect(textTable(sessionTableRows([kept])).split("\n")[1]).toContain("no, kept until 2026-11-22 11:00Z");
    const later = {
      ...facts({ "666666666666": "/src/app" }, { "vm/8/1": false }),
      now: new Date("2026-11-22T11:00:01Z"),
    };
    expect(sessionRow(box("ffffffffffff", labels), later)).toMatchObject({ orphan: true, kept_until: null });
    const idle = sessionRow(
      box("ffffffffffff", { ...labels, "drydock.pool": "warm" }),
      facts({}, { "vm/8/1": false }),
    );
    expect(idle).toMatchObject({ kind: "warm", orphan: true, kept_until: null });
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

describe("sessions list rows of adopted sessions", () => {
  it("names the live drydock that adopted a kept session, not the dead one that made it", () => {
    const kept = box("eeeeeeeeeeee", {
      "drydock.session": "555555555555",
      "drydock.owner": "vm/10587/100",
      "drydock.created": "2026-11-21T11:00:00Z",
      "drydock.kept-until": String(Math.floor(now.getTime() / 1000) + 3600),
    });
    const withAdopter = (adopter: string | undefined, alive: Record<string, boolean>): RowFacts => ({
      ...facts({ "555555555555": "/src/app" }, alive),
      adopterOf: () => adopter,
    });
    expect(
      sessionRow(kept, withAdopter("vm/2222/300", { "vm/10587/100": false, "vm/2222/300": true })),
    ).toMatchObject({ owner: "vm/2222/300", alive: true, orphan: false });
    // An adopter that died too leaves the label's owner, dead, and the box kept until its time.
    expect(
      sessionRow(kept, withAdopter("vm/2222/300", { "vm/10587/100": false, "vm/2222/300": false })),
    ).toMatchObject({ owner: "vm/10587/100", alive: false, orphan: false });
    expect(sessionRow(kept, withAdopter(undefined, { "vm/10587/100": false }))).toMatchObject({
      owner: "vm/10587/100",
      alive: false,
    });
  });
});
