/**
 * Runs one of the box file scripts through the bash tool of a remote session, for what no tool
 * returns as it is: a file's exact bytes, a directory's entries. The script's stdout comes back
 * base64-encoded (terminal output is cleaned; base64 has nothing to clean) with its exit status
 * after it; refusals are the same EXIT codes the in-process file access turns into errors.
 */
import { EXIT, RESOLVE } from "../tools/box-file-scripts.js";
import { CommandExitError, LimitExceededError } from "../util/errors.js";
import type { RemoteClient } from "./remote-client.js";
import { boxScript } from "../util/box-script.js";

/** $1 path, $2 offset, $3 count: the real path and size NUL-terminated, then those bytes of the file. */
export const READ_RANGE_SCRIPT =
  RESOLVE +
  boxScript("library/read-range.sh", {
    MISSING: EXIT.MISSING,
    DIRECTORY: EXIT.DIRECTORY,
    SPECIAL: EXIT.SPECIAL,
    UNREADABLE: EXIT.UNREADABLE,
  });

/** Single-quotes a word for bash. */
export function shellWord(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The line the bash tool runs: in a subshell with errexit off, so the user's shell options (set
 * -e, pipefail) neither end the shell nor change what is reported; the status follows the data.
 */
export function scriptCommand(script: string, args: readonly string[]): string {
  const argv = ["drydock", ...args].map(shellWord).join(" ");
  return `( set +e; bash -c ${shellWord(script)} ${argv} | base64 -w0; printf '\\n%s\\n' "\${PIPESTATUS[0]}" )`;
}

/** The script's stdout and exit status from the bash tool's stdout. */
export function parseScriptOutput(stdout: string): { data: Buffer; exitCode: number } | undefined {
  const lines = stdout.replaceAll("\r", "").trim().split("\n");
  const status = lines.pop();
  const encoded = lines.join("");
  if (status === undefined || !/^\d+$/.test(status) || !/^[A-Za-z0-9+/]*=*$/.test(encoded)) return undefined;
  return { data: Buffer.from(encoded, "base64"), exitCode: Number(status) };
}

export interface ScriptRun {
  exitCode: number;
  stdout: Buffer;
  stderr: string;
}

export async function runRemoteScript(
  client: RemoteClient,
  sessionId: string,
  script: string,
  args: readonly string[],
  signal?: AbortSignal,
): Promise<ScriptRun> {
  const reply = await client.call(
    "bash",
    { command: scriptCommand(script, args), session_id: sessionId, timeout_s: 60 },
    { timeoutMs: 120_000, signal },
  );
  if (reply.truncated === true) {
    throw new LimitExceededError(
      "the file access reply was cut at the session's output cap; create the session with a larger output cap",
    );
  }
  const stdout = typeof reply.stdout === "string" ? reply.stdout : "";
  const stderr = typeof reply.stderr === "string" ? reply.stderr : "";
  const parsed = parseScriptOutput(stdout);
  if (parsed === undefined) {
    throw new CommandExitError(
      typeof reply.exit_code === "number" ? reply.exit_code : -1,
      `${stderr}\n${stdout.slice(0, 500)}`,
      "file access through the remote shell",
    );
  }
  return { exitCode: parsed.exitCode, stdout: parsed.data, stderr };
}
