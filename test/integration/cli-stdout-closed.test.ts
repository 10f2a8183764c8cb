/**
 * A reader of stdout that goes early (`| head -1`) never crashes the CLI: `run --apply` still
 * applies its diff and removes its box, with the command's exit code; `sessions log` stops quietly.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { git, tempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

describe("stdout closed early", () => {
  const repo = tempRepo({ "README.md": "hello\n" });
  afterAll(() => repo[Symbol.dispose]());

  it("run --apply applies, removes its box and exits with the command's code, and prints no stack", () => {
    // seq's 200,000 lines make a diff far larger than the pipe holds, so writes fail with EPIPE.
    const r = spawnSync(
      "bash",
      [
        "-c",
        `set -o pipefail; node ${cli} run --apply --branch cut-short -- 'seq 1 200000 > nums.txt' | head -1`,
      ],
      { cwd: repo.path, encoding: "utf8", env: process.env },
    );
    expect(r.stdout).toBe("diff --git a/nums.txt b/nums.txt\n");
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled|at .*\.js:\d+/);
    expect(r.stderr).toMatch(/applied as cut-short/);
    expect(r.status).toBe(0);
    const size = Array.from({ length: 200_000 }, (_, i) => String(i + 1).length + 1).reduce((a, b) => a + b);
    expect(Number(git(repo.path, "cat-file", "-s", "cut-short:nums.txt"))).toBe(size);
    const session = /session ([0-9a-f]{12}) removed/.exec(r.stderr)?.[1];
    expect(session).toBeDefined();
    const left = spawnSync("docker", ["ps", "-aq", "--filter", `label=drydock.session=${session}`], {
      encoding: "utf8",
    });
    expect(left.stdout.trim()).toBe("");
  });
});
