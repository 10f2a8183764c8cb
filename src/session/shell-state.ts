/**
 * The part of a session's shell a checkpoint keeps: its working directory and its exported
 * variables (not its other variables, functions, aliases or jobs). Read and given back through the
 * shell itself, as base64, so no byte the shell holds is ever read as code on the host; what the
 * shell is given back is the text bash itself wrote (`export -p`), evaluated in the box.
 */
import { LimitExceededError } from "../util/errors.js";
import type { ShellResult } from "../sandbox/pty-shell.js";

export interface ShellState {
  /** base64 of the working directory. */
  cwd: string;
  /** base64 of the exported variables' names, one a line. */
  names: string;
  /** base64 of `export -p`. */
  exports: string;
}

/** The most a checkpoint keeps of a shell's exported variables, as base64. */
export const MAX_SHELL_STATE_BYTES = 512 * 1024;

type Run = (command: string) => Promise<ShellResult>;

const B64 = "command /usr/bin/base64 -w0";
// The frame's own per-command token changes every command: it is not the agent's.
const CAPTURE =
  `{ builtin printf '%s' "$PWD" | ${B64}; builtin echo; ` +
  `builtin compgen -e | { command /usr/bin/grep -vx DRYDOCK_COMMAND || builtin :; } | ${B64}; builtin echo; ` +
  `builtin export -p | { command /usr/bin/grep -v '^declare -x DRYDOCK_COMMAND=' || builtin :; } | ${B64}; builtin echo; }`;

const BASE64 = /^[A-Za-z0-9+/=]*$/;

/** Reads the shell's working directory and exported variables. */
export async function captureShellState(run: Run): Promise<ShellState> {
  const result = await run(CAPTURE);
  const lines = result.stdout.replace(/\r/g, "").split("\n");
  const [cwd, names, exports] = lines;
  if (
    result.exitCode !== 0 ||
    cwd === undefined ||
    names === undefined ||
    exports === undefined ||
    ![cwd, names, exports].every((line) => BASE64.test(line))
  ) {
    throw new Error(
      `the shell did not report its state (exit ${result.exitCode}): ${result.output.slice(-300)}`,
    );
  }
  if (cwd.length + names.length + exports.length > MAX_SHELL_STATE_BYTES) {
    throw new LimitExceededError(
      `the shell's exported variables take more than ${MAX_SHELL_STATE_BYTES / 1024} KiB; unset large ones and take the checkpoint again`,
    );
  }
  return { cwd, names, exports };
}

/** The command that gives the shell this state: exported variables it lacks unset, the rest set, cwd. */
export function restoreShellCommand(state: ShellState): string {
  // Every argument is base64 (checked when it was read): nothing here can end a quote.
  const decode = (b64: string) => `"$(builtin printf '%s' '${b64}' | ${B64.replace(" -w0", "")} -d)"`;
  return (
    `__drydock_keep=$'\\n'${decode(state.names)}$'\\n'; ` +
    `for __drydock_v in $(builtin compgen -e); do ` +
    `[[ $__drydock_keep == *$'\\n'"$__drydock_v"$'\\n'* || $__drydock_v == DRYDOCK_COMMAND ]] || builtin unset "$__drydock_v" 2>/dev/null; done; ` +
    `builtin eval ${decode(state.exports)} 2>/dev/null; ` +
    `builtin cd -- ${decode(state.cwd)} 2>/dev/null || builtin cd /workspace; ` +
    `builtin unset __drydock_keep __drydock_v; builtin printf '%s' "$PWD"`
  );
}

/** Gives the shell this state; returns the directory it is in after (the saved one, unless it is gone). */
export async function restoreShellState(run: Run, state: ShellState): Promise<string> {
  const result = await run(restoreShellCommand(state));
  if (result.exitCode !== 0) {
    throw new Error(
      `the shell could not be given its state (exit ${result.exitCode}): ${result.output.slice(-300)}`,
    );
  }
  return result.stdout.replace(/\r/g, "");
}

/** The working directory a state names, for people. */
export function shellStateCwd(state: ShellState): string {
  return Buffer.from(state.cwd, "base64").toString("utf8");
}
