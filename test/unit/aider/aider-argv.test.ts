import { describe, expect, it } from "vitest";
import { buildAiderArgv, FIXED_AIDER_FLAGS } from "../../../src/tools/aider/aider-argv.js";

const base = {
  model: "openai/drydock-offline",
  prompt: "Make greet() return 'Hello, NAME!'",
  editable: ["greet.py"],
  readonly: ["test_greet.py"],
  options: {},
  runId: "r1",
};

describe("buildAiderArgv", () => {
  it("runs aider non-interactively, offline, without commits, with the files and the prompt", () => {
    expect(buildAiderArgv(base)).toEqual([
      "aider",
      "--model=openai/drydock-offline",
      "--yes-always",
      "--no-pretty",
      "--no-fancy-input",
      "--no-check-update",
      "--no-show-release-notes",
      "--no-analytics",
      "--no-show-model-warnings",
      "--no-gui",
      "--no-notifications",
      "--no-detect-urls",
      "--disable-playwright",
      "--no-suggest-shell-commands",
      "--no-auto-commits",
      "--no-dirty-commits",
      "--no-gitignore",
      "--no-restore-chat-history",
      "--encoding=utf-8",
      "--chat-history-file=/tmp/drydock-aider/r1.chat.md",
      "--input-history-file=/tmp/drydock-aider/r1.input.history",
      "--file=greet.py",
      "--read=test_greet.py",
      "--message=Make greet() return 'Hello, NAME!'",
    ]);
  });

  it("never lets aider commit, touch .gitignore, ask a terminal or reach the network on its own", () => {
    for (const flag of [
      "--no-auto-commits",
      "--no-dirty-commits",
      "--no-gitignore",
      "--yes-always",
      "--no-check-update",
      "--no-analytics",
      "--no-detect-urls",
    ]) {
      expect(FIXED_AIDER_FLAGS).toContain(flag);
    }
  });

  it("attaches values with = so a prompt or path starting with a dash is not read as a flag", () => {
    const argv = buildAiderArgv({ ...base, prompt: "--help me", editable: ["-odd.py"], readonly: [] });
    expect(argv).toContain("--message=--help me");
    expect(argv).toContain("--file=-odd.py");
    expect(argv).not.toContain("--help me");
  });

  it("passes every editable file as --file and every read-only one as --read, in order", () => {
    const argv = buildAiderArgv({ ...base, editable: ["a.py", "src/b.py"], readonly: ["c.md", "d.md"] });
    expect(argv.filter((a) => a.startsWith("--file="))).toEqual(["--file=a.py", "--file=src/b.py"]);
    expect(argv.filter((a) => a.startsWith("--read="))).toEqual(["--read=c.md", "--read=d.md"]);
    expect(argv.at(-1)).toBe(`--message=${base.prompt}`);
  });

  it("maps the aider options to their flags", () => {
    const argv = buildAiderArgv({
      ...base,
      options: {
        edit_format: "whole",
        map_tokens: 0,
        lint_cmd: "ruff check",
        auto_lint: false,
        test_cmd: "python3 -m unittest",
        auto_test: true,
      },
    });
    expect(argv).toEqual(
      expect.arrayContaining([
        "--edit-format=whole",
        "--map-tokens=0",
        "--lint-cmd=ruff check",
        "--no-auto-lint",
        "--test-cmd=python3 -m unittest",
        "--auto-test",
      ]),
    );
    expect(
      buildAiderArgv(base).some((a) => a.startsWith("--edit-format") || a.startsWith("--map-tokens")),
    ).toBe(false);
  });

  it("puts history files in the run directory it is given", () => {
    const argv = buildAiderArgv({ ...base, runDir: "/tmp/x", runId: "abc" });
    expect(argv).toContain("--chat-history-file=/tmp/x/abc.chat.md");
    expect(argv).toContain("--input-history-file=/tmp/x/abc.input.history");
  });
});
