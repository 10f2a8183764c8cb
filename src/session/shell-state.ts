/**
 * The part of a session's shell a checkpoint keeps: its working directory and its exported
 * variables (not its other variables, functions, aliases or jobs). The shell writes them to a file
 * in the box with builtins only (no process is started: a process costs a few ms in a busy box),
 * and the checkpoint's own script, on the box channel, hands the bytes to the host, which keeps
 * them as base64; no byte the shell holds is ever read as code on the host. To give a shell its
 * state back, the bytes go back into that file and the shell reads them with builtins; what it
 * evaluates is the text bash itself wrote (`export -p`), in the box. The agent can write that
 * file too: what it puts there is only ever given back to its own shell.
 */
import { LimitExceededError } from "../util/errors.js";
import type { ShellResult } from "../sandbox/pty-shell.js";
import type { Box } from "../sandbox/box.js";
import { boxSh } from "../sandbox/box-channel.js";
import { COMMAND_TOKEN_VARIABLE } from "../sandbox/shell-frame.js";
import { MAX_SHELL_STATE_FILE_BYTES, SHELL_STATE_FILE } from "../workspace/checkpoint-script.js";

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

/** The shell writes its state to SHELL_STATE_FILE, with builtins only. */
export const CAPTURE_COMMAND =
  `{ builtin printf '%s\\0' "$PWD"; builtin compgen -e; builtin printf '\\0'; ` +
  `builtin export -p; builtin printf '\\0'; } >| ${SHELL_STATE_FILE}`;

/**
 * Has the shell write its state to SHELL_STATE_FILE, for the checkpoint's script to read
 * (`parseShellState`). The shell answers once any command it runs has ended.
 */
export async function writeShellStateInBox(run: Run): Promise<void> {
  const result = await run(CAPTURE_COMMAND);
  if (result.exitCode !== 0) {
    throw new Error(
      `the shell did not report its state (exit ${result.exitCode}): ${result.output.slice(-300)}`,
    );
  }
}

function splitLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let at = 0;
  for (let nl = bytes.indexOf(10, at); nl >= 0; nl = bytes.indexOf(10, at)) {
    lines.push(bytes.subarray(at, nl + 1));
    at = nl + 1;
  }
  if (at < bytes.length) lines.push(bytes.subarray(at));
  return lines;
}

const COMMAND_NAME = Buffer.from(`${COMMAND_TOKEN_VARIABLE}\n`);
// The frame's own per-command token changes every command: it is not the agent's. (bash writes
// `declare -x`, or `export` in POSIX mode.)
const COMMAND_EXPORTS = [`declare -x ${COMMAND_TOKEN_VARIABLE}=`, `export ${COMMAND_TOKEN_VARIABLE}=`].map(
  (p) => Buffer.from(p),
);

/** The state in the bytes of SHELL_STATE_FILE (as the shell wrote it), without the frame's own variable. */
export function parseShellState(raw: Buffer): ShellState {
  if (raw.length >= MAX_SHELL_STATE_FILE_BYTES) throw overLimit();
  const parts: Buffer[] = [];
  let at = 0;
  for (let i = 0; i < 3; i++) {
    const nul = raw.indexOf(0, at);
    if (nul < 0) throw new Error("the shell's state was not written whole");
    parts.push(raw.subarray(at, nul));
    at = nul + 1;
  }
  const [cwd, names, exports] = parts as [Buffer, Buffer, Buffer];
  const keptNames = splitLines(names).filter(
    (line) => !line.equals(COMMAND_NAME) && !line.equals(COMMAND_NAME.subarray(0, -1)),
  );
  const keptExports = splitLines(exports).filter(
    (line) => !COMMAND_EXPORTS.some((p) => line.subarray(0, p.length).equals(p)),
  );
  const state = {
    cwd: cwd.toString("base64"),
    names: Buffer.concat(keptNames).toString("base64"),
    exports: Buffer.concat(keptExports).toString("base64"),
  };
  if (state.cwd.length + state.names.length + state.exports.length > MAX_SHELL_STATE_BYTES) throw overLimit();
  return state;
}

function overLimit(): LimitExceededError {
  return new LimitExceededError(
    `the shell's exported variables take more than ${MAX_SHELL_STATE_BYTES / 1024} KiB; unset large ones and take the checkpoint again`,
  );
}

/** The bytes SHELL_STATE_FILE must hold for the shell to be given `state` (RESTORE_COMMAND). */
export function shellStateFile(state: ShellState): Buffer {
  const nul = Buffer.from([0]);
  return Buffer.concat(
    [state.cwd, state.names, state.exports].flatMap((b64) => [Buffer.from(b64, "base64"), nul]),
  );
}

/**
 * The command that gives the shell the state in SHELL_STATE_FILE, builtins only: exported
 * variables it lacks unset, the rest set, the directory; prints the directory it is then in.
 * Fails, changing nothing, when the file does not hold three parts.
 */
export const RESTORE_COMMAND =
  `if { IFS= builtin read -r -d '' __drydock_cwd && IFS= builtin read -r -d '' __drydock_keep && ` +
  `IFS= builtin read -r -d '' __drydock_exports; } < ${SHELL_STATE_FILE}; then ` +
  `__drydock_keep=$'\\n'"$__drydock_keep"$'\\n'; ` +
  `for __drydock_v in $(builtin compgen -e); do ` +
  `[[ $__drydock_keep == *$'\\n'"$__drydock_v"$'\\n'* || $__drydock_v == ${COMMAND_TOKEN_VARIABLE} ]] || builtin unset "$__drydock_v" 2>/dev/null; done; ` +
  `builtin eval "$__drydock_exports" 2>/dev/null; ` +
  `builtin cd -- "$__drydock_cwd" 2>/dev/null || builtin cd /workspace; ` +
  `builtin unset __drydock_keep __drydock_v __drydock_cwd __drydock_exports; builtin printf '%s' "$PWD"; ` +
  `else builtin unset __drydock_keep __drydock_cwd __drydock_exports; builtin false; fi`;

/** Writes `state` to SHELL_STATE_FILE in the box, through its channel (a fork's new box; a restore's script does it itself). */
export async function putShellStateInBox(box: Box, state: ShellState, signal?: AbortSignal): Promise<void> {
  const result = await boxSh(box, `cat >| ${SHELL_STATE_FILE}`, [], {
    stdin: shellStateFile(state),
    timeoutMs: 30_000,
    signal,
  });
  if (result.exitCode !== 0) {
    throw new Error(
      `the shell's state could not be written in the box: ${result.stderr.toString("utf8").slice(-300)}`,
    );
  }
}

/** Gives the shell the state now in SHELL_STATE_FILE; returns the directory it is in after (the saved one, unless it is gone). */
export async function restoreShellState(run: Run): Promise<string> {
  const result = await run(RESTORE_COMMAND);
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
