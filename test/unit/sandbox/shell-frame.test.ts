/**
 * The frame and the state restore are bash: run them in a local bash (the box runs the same
 * version family) to check what they promise without a box.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FrameScanner, RS } from "../../../src/sandbox/frame-scanner.js";
import {
  frameCode,
  framed,
  restoreState,
  shellInit,
  shellQuote,
  stateSlotFile,
} from "../../../src/sandbox/shell-frame.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "drydock-frame-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs a script in a fresh non-interactive bash, as the box's shell runs (no rc files), given the
 * frame's code first as a new shell is.
 */
function bash(script: string): { stdout: string; stderr: string } {
  const r = spawnSync("bash", ["--noprofile", "--norc", "-s"], {
    input: `${frameCode(join(dir, "state"))}\n${script}`,
    cwd: dir,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, FROM_ENV: "1" },
  });
  return { stdout: r.stdout, stderr: r.stderr };
}

function scan(nonce: string, text: string, token: string | null): { output: string; exitCode?: number } {
  let output = "";
  let exitCode: number | undefined;
  for (const e of new FrameScanner(nonce, token).feed(text)) {
    if (e.kind === "output") output += e.text;
    else exitCode = e.exitCode;
  }
  return { output, exitCode };
}

const frame = (command: string, nonce: string, token: string) =>
  framed(command, { nonce, token, stderrPath: join(dir, "stderr") });

describe("framed", () => {
  it("puts stdout and stderr apart, each with its own end, and keeps the exit status", () => {
    const nonce = "0123456789abcdef";
    const out = bash(frame("echo out; echo err >&2; (exit 7)", nonce, "t1"));
    expect(scan(nonce, out.stdout, "t1")).toEqual({ output: "out\n", exitCode: 7 });
    // stderr has no start marker: all of it is the command's, up to the end.
    expect(scan(nonce, readFileSync(join(dir, "stderr"), "utf8"), null)).toEqual({
      output: "err\n",
      exitCode: 7,
    });
  });

  it("exports the command's token to what it runs and reads the command verbatim", () => {
    const nonce = "00000000ffffffff";
    const command = "env | grep ^DRYDOCK_COMMAND=; printf '%s\\n' \"$'x'\" '__DRYDOCK_x__' \"'\"";
    expect(scan(nonce, bash(frame(command, nonce, "tok42")).stdout, "tok42").output).toBe(
      "DRYDOCK_COMMAND=tok42\n$'x'\n__DRYDOCK_x__\n'\n",
    );
  });

  it("keeps a shell under set -e and set -u alive through its own steps", () => {
    const nonce = "5555666677778888";
    const script =
      "set -eu\n" + frame("echo first", nonce, "t1") + frame("echo second", "9999aaaabbbbcccc", "t2");
    const { stdout } = bash(script);
    expect(scan(nonce, stdout, "t1")).toEqual({ output: "first\n", exitCode: 0 });
    expect(scan("9999aaaabbbbcccc", stdout, "t2")).toEqual({ output: "second\n", exitCode: 0 });
  });

  it("is not broken by functions named after the builtins it uses", () => {
    const nonce = "1111222233334444";
    const script =
      "eval() { :; }; printf() { :; }; read() { :; }; export() { :; }; unset() { :; }; declare() { :; }\n" +
      frame("echo still framed", nonce, "t");
    expect(scan(nonce, bash(script).stdout, "t")).toEqual({ output: "still framed\n", exitCode: 0 });
  });
});

describe("restoreState", () => {
  const setup = [
    "cd sub",
    "export EXPORTED='a b'\"'\"'c' PLAIN_GONE=1",
    "unset FROM_ENV PLAIN_GONE",
    "PLAIN=$'two\\nlines'",
    "declare -a ARR=(1 '2 3')",
    "declare -A MAP=([k]=v)",
    "declare -i NUM=5",
    'greet() { echo "hi $1"; }',
    "alias ll='ls -l'",
    "set -o pipefail -o nounset",
    "shopt -s nullglob",
    "shopt -u sourcepath",
  ].join("\n");
  const show = [
    'echo "pwd=$PWD"',
    "declare -p EXPORTED PLAIN ARR MAP NUM 2>&1",
    'echo "from_env=${FROM_ENV-unset} gone=${PLAIN_GONE-unset} after=${AFTER-unset}"',
    "greet you",
    "alias",
    "set -o | grep -E '^(pipefail|nounset|errexit) '",
    "shopt nullglob sourcepath",
    "declare -p | grep -c __drydock_ || true",
  ].join("\n");

  /**
   * A shell that ran the setup, then a command named `token` (whose state is saved after it),
   * then one that made `changes` and ended the shell before its frame could save anything.
   */
  function saved(token: string, changes: string): void {
    spawnSync("mkdir", ["-p", join(dir, "sub")]);
    bash(
      `${setup}\n${frame("true", "aaaabbbbccccdddd", token)}${frame(`${changes}\nexit 5`, "eeeeffff00001111", "next")}`,
    );
  }

  it("gives a new shell the variables, functions, aliases, options and directory from before the command", () => {
    saved("tok1", "cd /; export AFTER=1; set -o errexit; unalias ll; unset -f greet; PLAIN=changed");
    const before = bash(`${setup}\n${show}`).stdout;
    const r = bash(`${restoreState(join(dir, "state"), "tok1", "/", `${RS}R`)}\n${show}`);
    expect(r.stdout.startsWith(`${RS}Rrestored${RS}`)).toBe(true);
    expect(r.stdout.slice(`${RS}Rrestored${RS}`.length)).toBe(before);
    expect(before).toContain(`pwd=${join(dir, "sub")}`);
    expect(before).toContain("from_env=unset gone=unset after=unset");
    expect(before).toContain("hi you");
  });

  it("restores nothing from state another command saved, and says so", () => {
    saved("tok1", "true");
    const r = bash(
      `${restoreState(join(dir, "state"), "other", "/", `${RS}R`)}\necho "pwd=$PWD"; type greet 2>&1 | head -1`,
    );
    expect(r.stdout.startsWith(`${RS}Rno-state${RS}pwd=${dir}\n`)).toBe(true);
    expect(r.stdout).toMatch(/greet: not found/);
  });

  it("uses no state that was cut short, and none a shell saved at its start under another name", () => {
    saved("tok1", "true");
    const file = stateSlotFile(join(dir, "state"), "tok1");
    const whole = readFileSync(file, "utf8");
    writeFileSync(file, whole.slice(0, whole.length - 20));
    expect(bash(restoreState(join(dir, "state"), "tok1", "/", `${RS}R`)).stdout).toBe(`${RS}Rno-state${RS}`);
    bash(shellInit(`${RS}READY`, join(dir, "state"), "first"));
    expect(readFileSync(stateSlotFile(join(dir, "state"), "first"), "utf8")).toMatch(
      /^#drydock-state first\n[^]*\n#drydock-end first\n$/,
    );
    expect(bash(`${restoreState(join(dir, "state"), "first", "/", `${RS}R`)}`).stdout).toBe(
      `${RS}Rrestored${RS}`,
    );
  });

  it("keeps the state from before a command that finished, saving its own in the other slot", () => {
    spawnSync("mkdir", ["-p", join(dir, "sub")]);
    bash(
      `${setup}\n${frame("true", "aaaabbbbccccdddd", "before0")}${frame("cd /; X=after", "eeeeffff00001111", "after1")}`,
    );
    const r = bash(`${restoreState(join(dir, "state"), "before0", "/", `${RS}R`)}\npwd; echo "\${X-unset}"`);
    expect(r.stdout).toBe(`${RS}Rrestored${RS}${join(dir, "sub")}\nunset\n`);
    const after = bash(`${restoreState(join(dir, "state"), "after1", "/", `${RS}R`)}\npwd; echo "$X"`);
    expect(after.stdout).toBe(`${RS}Rrestored${RS}/\nafter\n`);
  });

  it("says when the directory is gone and starts in the work directory", () => {
    saved("tok1", "true");
    rmSync(join(dir, "sub"), { recursive: true });
    const r = bash(`${restoreState(join(dir, "state"), "tok1", "/", `${RS}R`)}\npwd; greet x`);
    expect(r.stdout).toBe(`${RS}Rno-directory${RS}/\nhi x\n`);
  });

  it("quotes any path for bash", () => {
    expect(bash(`printf '%s' ${shellQuote("it's a $path")}`).stdout).toBe("it's a $path");
  });
});
