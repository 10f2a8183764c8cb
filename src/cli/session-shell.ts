/**
 * `drydock sessions shell ID`: a person's own interactive shell in a session's box, in /workspace
 * under a uid and group of its own (person-shell-confinement.ts), reading nothing the agent wrote:
 * a new exec with a terminal of its own (through the engine API, as the agent's shell runs), never
 * the agent's shell. The relay runs on the host between the person's terminal and the box's: it
 * writes a `person_command` line for each line the person types (person-shell-typed.ts), from the
 * keystrokes it passes on; what the box prints can add only the exit status the shell reported
 * (person-shell-markers.ts), logged as `box_reported_exit_code`. The box has no write path to the log.
 */
import { randomBytes } from "node:crypto";
import { StringDecoder } from "node:string_decoder";
import { Engine } from "../engine/engine.js";
import { openTerminalExec } from "../engine/exec-terminal.js";
import { WORKSPACE } from "../sandbox/box-profile.js";
import { appendAuditEntry } from "../session/audit-log.js";
import { capText, MAX_COMMAND_CHARS, type AuditEntry } from "../session/audit-entry.js";
import { redactHostKeys } from "./host-key-redaction.js";
import { PERSON_EXEC_ENV, PERSON_USER, personShellArgv } from "./person-shell-confinement.js";
import { PersonShellMarkers, personShellRc } from "./person-shell-markers.js";
import { removePersonShell, stagePersonShell } from "./person-shell-stage.js";
import { TypedLines, type TypedLine } from "./person-shell-typed.js";
import { requireBox, type SessionTarget } from "./session-target.js";
import { terminalLine } from "../util/terminal-text.js";

export interface PersonShellIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
}

/** Runs the person's shell until it exits; returns its exit code. */
export async function personShell(
  target: SessionTarget,
  io: PersonShellIo = { stdin: process.stdin, stdout: process.stdout },
): Promise<number> {
  const box = requireBox(target, "shell");
  redactHostKeys();
  const nonce = randomBytes(16).toString("hex");
  const log = (entry: Omit<AuditEntry, "ts" | "session" | "actor">, at = Date.now()) =>
    appendAuditEntry(
      { ts: new Date(at).toISOString(), session: target.id, actor: "person", ...entry },
      target.state,
    );
  const started = Date.now();
  log({
    tool: "person_shell",
    args: { box: box.id.slice(0, 12), user: PERSON_USER, event: "start" },
    outcome: { ok: true },
    duration_ms: null,
    output_bytes: null,
  });
  const engine = await Engine.connect();
  const staged = await stagePersonShell(engine, box.id, personShellRc(nonce));
  for (const note of staged.notes) io.stdout.write(`drydock: ${terminalLine(note)}\r\n`);
  const term = await openTerminalExec(
    engine,
    box.id,
    personShellArgv(staged.rc, process.env.TERM || "xterm-256color", staged.gitDir),
    {
      user: PERSON_USER,
      workdir: WORKSPACE,
      env: PERSON_EXEC_ENV,
      cols: io.stdout.columns || 80,
      rows: io.stdout.rows || 24,
      input: true,
    },
  ).catch(async (error: unknown) => {
    await removePersonShell(engine, box.id, staged.dir);
    throw error;
  });
  const markers = new PersonShellMarkers(nonce);
  const typed = new TypedLines();
  // A character split between two chunks is decoded whole, both ways.
  const utf8Out = new StringDecoder("utf8");
  const utf8In = new StringDecoder("utf8");
  /** Lines typed since the shell last reported a prompt, with when each was entered and what the box printed since. */
  let pending: { line: TypedLine; at: number; outputBytes: number }[] = [];
  const logLine = (p: (typeof pending)[number], exitCode: number | null) =>
    log(
      {
        tool: "person_command",
        args: {
          command: capText(p.line.command, MAX_COMMAND_CHARS),
          ...(p.line.keys !== undefined ? { keys: capText(p.line.keys, MAX_COMMAND_CHARS) } : {}),
        },
        // The status is the shell's report, printed in the box: the box's word, named so.
        outcome: { ok: exitCode === 0, box_reported_exit_code: exitCode },
        duration_ms: Date.now() - p.at,
        output_bytes: p.outputBytes,
      },
      p.at,
    );
  term.onData((chunk) => {
    const { output, reports } = markers.push(utf8Out.write(chunk));
    if (output) io.stdout.write(output);
    for (const p of pending) p.outputBytes += Buffer.byteLength(output);
    if (reports.length === 0 || pending.length === 0) return;
    // A prompt came back: the first line typed since the last one is the command it ended, with
    // the status reported; lines typed after it went to that command, or ahead of the next
    // prompt, and are logged without a status rather than with someone else's.
    const [first, ...rest] = pending;
    pending = [];
    logLine(first!, reports[0]!.exitCode);
    for (const p of rest) logLine(p, null);
  });
  const raw = io.stdin.isTTY === true;
  if (raw) io.stdin.setRawMode(true);
  const onInput = (chunk: Buffer | string) => {
    const text = typeof chunk === "string" ? chunk : utf8In.write(chunk);
    for (const line of typed.push(text)) pending.push({ line, at: Date.now(), outputBytes: 0 });
    term.write(chunk);
  };
  io.stdin.on("data", onInput);
  io.stdin.resume();
  // The box's terminal keeps the size it started with (no resize through this exec).
  await term.ended;
  const exitCode = (await term.exitCode()) ?? 1;
  io.stdout.write(markers.flush());
  io.stdin.off("data", onInput);
  term.close();
  if (raw) io.stdin.setRawMode(false);
  io.stdin.pause();
  // What was typed and never reported on (the shell ended, or the box went) is still logged.
  for (const p of pending) logLine(p, null);
  pending = [];
  await removePersonShell(engine, box.id, staged.dir);
  log({
    tool: "person_shell",
    args: { box: box.id.slice(0, 12), user: PERSON_USER, event: "end" },
    outcome: { ok: exitCode === 0, exit_code: exitCode },
    duration_ms: Date.now() - started,
    output_bytes: null,
  });
  return exitCode;
}
