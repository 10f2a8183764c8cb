/**
 * `npm run bench` writes its figures where git does not track them, and the tracked figures only
 * when asked (--save); its arguments and BENCH_ONLY are checked before anything runs.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sandboxImage } from "../helpers/sessions.js";

const root = new URL("../..", import.meta.url).pathname;
const results = join(root, "bench", "results");
const tracked = ["latest.json", "session-ready.svg"];
const tmp = mkdtempSync(join(tmpdir(), "drydock-bench-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function bench(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, ["bench/run.mjs", ...args], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, DRYDOCK_IMAGE: sandboxImage(), ...env },
    timeout: 170_000,
  });
}

const digest = (file: string) =>
  existsSync(file) ? createHash("sha256").update(readFileSync(file)).digest("hex") : "absent";

describe("npm run bench", () => {
  it("refuses an unknown argument or section before it measures anything", () => {
    const flag = bench(["--saev"], {});
    expect(flag.status).toBe(2);
    expect(flag.stderr).toContain("unknown argument --saev; the arguments are --save");
    const only = bench([], { BENCH_ONLY: "editor,edtior" });
    expect(only.status).toBe(2);
    expect(only.stderr).toContain("BENCH_ONLY names edtior, which is no section; the sections are ready,");
  });

  it("refuses a --burn that is not a count of burners, or with --save or --fail-on-regression", () => {
    for (const args of [["--burn", "0"], ["--burn=two"], ["--burn"]]) {
      const run = bench(args, {});
      expect(run.status).toBe(2);
      expect(run.stderr).toContain("--burn takes how many CPU burners to start, a whole number from 1 to 64");
    }
    for (const flag of ["--save", "--fail-on-regression"]) {
      const run = bench(["--burn", "2", flag], {});
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(`so its figures are not saved (--save) or held against the saved ones`);
    }
  });

  it("runs under --burn N with N burners beside it, records them and the load, and leaves none running", () => {
    const run = bench(["--burn", "2"], { BENCH_ONLY: "editor", BENCH_RUNS: "2", BENCH_RESULTS_DIR: tmp });
    expect(run.status, run.stderr).toBe(0);
    const pids = /CPU burner\(s\) running beside the bench \(pids (\d+), (\d+)\)/.exec(run.stderr);
    expect(pids, run.stderr).not.toBeNull();
    for (const pid of pids!.slice(1).map(Number)) expect(() => process.kill(pid, 0)).toThrow();
    const file = readdirSync(tmp).find((name) => name.startsWith("run-burn2-"));
    expect(file).toBeDefined();
    const saved = JSON.parse(readFileSync(join(tmp, file!), "utf8")) as {
      burners: number;
      load: Array<{ at: string; one: number }>;
    };
    expect(saved.burners).toBe(2);
    expect(saved.load.map((l) => l.at)).toEqual(["editor", "end"]);
    expect(run.stdout).toContain("2 CPU burner(s), load average");
    rmSync(join(tmp, file!));
  });

  it("writes a run file git ignores and leaves the tracked figures alone", () => {
    const before = tracked.map((name) => digest(join(results, name)));
    const runsBefore = new Set(readdirSync(results));
    const run = bench([], { BENCH_ONLY: "editor", BENCH_RUNS: "2" });
    const added = readdirSync(results).filter((name) => !runsBefore.has(name));
    for (const name of added) rmSync(join(results, name));
    expect(run.status, run.stderr).toBe(0);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatch(/^run-\d{4}-\d\d-\d\dT[\d-]+Z\.json$/);
    expect(tracked.map((name) => digest(join(results, name)))).toEqual(before);
    const ignored = spawnSync("git", ["check-ignore", "-q", `bench/results/${added[0]}`], { cwd: root });
    expect(ignored.status).toBe(0);
    // Two interleaved rounds cannot tell a difference from noise, and the table says so.
    expect(run.stdout).toContain("too few runs to tell");
  });

  it("writes latest.json too with --save", () => {
    const run = bench(["--save"], { BENCH_ONLY: "editor", BENCH_RUNS: "2", BENCH_RESULTS_DIR: tmp });
    expect(run.status, run.stderr).toBe(0);
    const saved = JSON.parse(readFileSync(join(tmp, "latest.json"), "utf8")) as {
      rows: Array<{ name: string; drydock: { median: number; p10: number; p90: number } }>;
    };
    expect(saved.rows.map((r) => r.name)).toEqual(["view", "replace"]);
    expect(saved.rows[0]!.drydock.p10).toBeLessThanOrEqual(saved.rows[0]!.drydock.p90);
    expect(readdirSync(tmp).filter((name) => name.startsWith("run-"))).toHaveLength(1);
  });

  it("names the figures that moved beyond their spread against latest.json, and fails on them when asked", () => {
    const dir = mkdtempSync(join(tmpdir(), "drydock-bench-saved-"));
    try {
      const first = bench(["--save"], { BENCH_ONLY: "editor", BENCH_RUNS: "6", BENCH_RESULTS_DIR: dir });
      expect(first.status, first.stderr).toBe(0);
      expect(first.stderr).toContain("no saved figures at");
      // Saved figures ten times faster than anything this machine does, with a narrow band: every
      // figure of the next run is slower beyond the spread.
      const file = join(dir, "latest.json");
      const saved = JSON.parse(readFileSync(file, "utf8")) as {
        rows: Array<{ drydock: { median: number; p10: number; p90: number; samples: number[] } }>;
      };
      for (const row of saved.rows) {
        row.drydock.samples = row.drydock.samples.map((x) => x / 10);
        Object.assign(row.drydock, {
          median: row.drydock.median / 10,
          p10: row.drydock.p10 / 10,
          p90: row.drydock.p90 / 10,
        });
      }
      writeFileSync(file, JSON.stringify(saved));
      const second = bench(["--fail-on-regression"], {
        BENCH_ONLY: "editor",
        BENCH_RUNS: "6",
        BENCH_RESULTS_DIR: dir,
      });
      expect(second.status).toBe(1);
      expect(second.stdout).toContain("against the saved figures");
      expect(second.stdout).toMatch(
        /\| file_editor \(1,000-line file\): view \| [\d.]+ \| [\d.]+ \| \+\d+ % \| slower \(Mann-Whitney U/,
      );
      expect(second.stderr).toMatch(/2 figure\(s\) moved beyond their spread the wrong way/);
      // Without the flag the same comparison only reports.
      const third = bench([], { BENCH_ONLY: "editor", BENCH_RUNS: "6", BENCH_RESULTS_DIR: dir });
      expect(third.status, third.stderr).toBe(0);
      expect(third.stdout).toContain("slower");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
