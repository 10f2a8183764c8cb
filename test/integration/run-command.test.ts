/**
 * `drydock run`: the words after `--`, applying only on success, and flags refused before a box
 * is made.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

let state: string;

function run(repo: string, ...args: string[]): Promise<Ran> {
  const child = spawn(
    process.execPath,
    [cli, "run", "--repo", repo, "--image", inject("sandboxImage"), "--no-env", ...args],
    { env: { ...process.env, DRYDOCK_STATE_DIR: state }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** The command's own output with --no-diff: stdout, where drydock prints nothing of its own. */
const commandOutput = (ran: Ran) => ran.stdout.trim();

const branches = (repo: string) => git(repo, "branch", "--list", "drydock/*").trim();

beforeAll(() => {
  state = mkdtempSync(join(tmpdir(), "drydock-state-"));
});

afterAll(() => rmSync(state, { recursive: true, force: true }));

describe("drydock run -- COMMAND", () => {
  let repo: TempRepo;
  beforeAll(() => {
    repo = tempRepo({ "README.md": "hello\n" });
  });
  afterAll(() => repo?.[Symbol.dispose]());

  it("runs several words as a program and its arguments, each word as typed", async () => {
    const ran = await run(repo.path, "--no-diff", "--", "sh", "-c", "echo first; echo second");
    expect(ran.code, ran.stderr).toBe(0);
    expect(commandOutput(ran)).toBe("first\nsecond");
    expect(ran.stderr).not.toMatch(/first|second/);
    const id = await run(repo.path, "--no-diff", "--", "id", "-u");
    expect(commandOutput(id)).toBe("1000");
    const quoted = await run(repo.path, "--no-diff", "--", "printf", "[%s]\\n", "it's", "$HOME", "a b");
    expect(commandOutput(quoted)).toBe("[it's]\n[$HOME]\n[a b]");
  });

  it("runs one word as a shell line", async () => {
    const ran = await run(repo.path, "--no-diff", "--", "echo one && echo two | tr a-z A-Z");
    expect(ran.code, ran.stderr).toBe(0);
    expect(commandOutput(ran)).toBe("one\nTWO");
  });
});

describe("drydock run in a repository with a large untracked tree", () => {
  it("says which directory is copied into every box, how much, and how to leave it out", async () => {
    using repo = tempRepo({ "README.md": "hello\n" });
    const files: Record<string, string> = {};
    // (Build output: a dependency tree, node_modules say, is left out of the box altogether.)
    for (let i = 0; i < 1_100; i++) files[`build/pkg${i % 10}/f${i}.js`] = "x";
    // A directory name with a title-setting escape, as a hostile repository might ship.
    for (let i = 0; i < 1_000; i++) files[`evil\x1b]0;owned\x07/f${i}`] = "y";
    for (const [path, body] of Object.entries(files)) {
      mkdirSync(join(repo.path, dirname(path)), { recursive: true });
      writeFileSync(join(repo.path, path), body);
    }
    const ran = await run(repo.path, "--no-diff", "--", "true");
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toMatch(
      /build\/ \(1,100 files\), evil\\e\]0;owned\\x07\/ \(1,000 files\) are neither tracked nor ignored/,
    );
    expect(ran.stderr).toMatch(/this start sent 2,1\d\d files/);
    expect(ran.stderr).toMatch(/add build\/ evil\\e\]0;owned\\x07\/ to \.gitignore/);
    expect(ran.stderr).not.toContain("\x1b]0;");
    // Ignored, it is not copied and nothing is said.
    writeFileSync(join(repo.path, ".git", "info", "exclude"), "build/\nevil*/\n");
    const quiet = await run(repo.path, "--no-diff", "--", "true");
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toMatch(/neither tracked nor ignored/);
  });
});

describe("drydock run --apply", () => {
  it("does not apply when the command fails, says so, and keeps the command's exit code", async () => {
    using repo = tempRepo({ "README.md": "hello\n" });
    const ran = await run(repo.path, "--apply", "--", "echo more >> README.md; no-such-program");
    expect(ran.code).toBe(127);
    expect(ran.stdout).toContain("+more");
    expect(ran.stderr).toMatch(
      /the command failed \(exit 127\); nothing applied \(--apply-on-failure applies anyway\)/,
    );
    expect(branches(repo.path)).toBe("");
  });

  it("applies after a failure with --apply-on-failure, still exiting with the command's code", async () => {
    using repo = tempRepo({ "README.md": "hello\n" });
    const ran = await run(
      repo.path,
      "--apply",
      "--apply-on-failure",
      "--branch",
      "drydock/anyway",
      "--",
      "echo more >> README.md; exit 3",
    );
    expect(ran.code).toBe(3);
    expect(ran.stderr).toMatch(/applied as drydock\/anyway/);
    expect(git(repo.path, "show", "drydock/anyway:README.md")).toBe("hello\nmore\n");
  });

  it("applies after a success", async () => {
    using repo = tempRepo({ "README.md": "hello\n" });
    const ran = await run(repo.path, "--apply", "--branch", "drydock/ok", "--", "echo more >> README.md");
    expect(ran.code, ran.stderr).toBe(0);
    expect(git(repo.path, "show", "drydock/ok:README.md")).toBe("hello\nmore\n");
  });
});

describe("drydock run's flags", () => {
  it("refuses flags that cannot work before a box is made, naming the flag, exit 2", async () => {
    using repo = tempRepo({ "README.md": "hello\n" });
    git(repo.path, "branch", "taken");
    const cases: Array<[string[], RegExp]> = [
      [["--timeout", "soon"], /^drydock: --timeout: "soon" is not a number of seconds/],
      [["--branch", "x"], /^drydock: --branch: works with --apply only/],
      [["--apply-on-failure"], /^drydock: --apply-on-failure: works with --apply only/],
      [["--allow-ignore-changes"], /^drydock: --allow-ignore-changes: works with --apply only/],
      [["--apply", "--worktree", "--branch", "x"], /^drydock: --branch: .*give one of the two/],
      [["--apply", "--branch", "bad..name"], /^drydock: --branch: "bad\.\.name" is not a valid branch name/],
      [["--apply", "--branch", "taken"], /^drydock: --branch: taken already exists/],
      [["--network", "drydock-no-such-network"], /^drydock: --network: the engine has no network/],
      [
        ["--image", "drydock-no-such-image:1"],
        /^drydock: --image: drydock-no-such-image:1 is not in the engine/,
      ],
    ];
    for (const [flags, message] of cases) {
      const ran = await run(repo.path, ...flags, "--", "touch made-a-box");
      expect(ran.stderr, flags.join(" ")).toMatch(message);
      expect(ran.stderr.trim().split("\n"), flags.join(" ")).toHaveLength(1);
      expect(ran.code, flags.join(" ")).toBe(2);
    }
    const notRepo = mkdtempSync(join(tmpdir(), "drydock-not-a-repo-"));
    try {
      const ran = await run(notRepo, "--", "true");
      expect(ran.stderr).toMatch(/^drydock: --repo: .* is not inside a git repository/);
      expect(ran.code).toBe(2);
    } finally {
      rmSync(notRepo, { recursive: true, force: true });
    }
  });
});
