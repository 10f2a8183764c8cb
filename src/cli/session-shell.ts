/**
 * `drydock sessions shell ID`: a person's own interactive shell in a session's box, as the box
 * user in /workspace but in a group of its own, reading nothing the agent can write
 * (person-shell-confinement.ts): a new exec with a terminal of its own (through the engine API, as the agent's
 * shell runs), never the agent's shell. The relay runs on the host between the person's terminal
 * and the box's; the shell in the box reports each command through that terminal
 * (person-shell-markers.ts), and the relay writes the audit log, so the box gets no write path to it.
 */
import { randomBytes } from "node:crypto";
import { StringDecoder } from "node:string_decoder";
import { Engine } from "../engine/engine.js";
import { openTerminalExec } from "../engine/exec-terminal.js";
import { BOX_USER, WORKSPACE } from "../sandbox/box-profile.js";
import { appendAuditEntry } from "../session/audit-log.js";
import { capText, MAX_COMMAND_CHARS, type AuditEntry } from "../session/audit-entry.js";
import { DrydockError } from "../util/errors.js";
import { redactHostKeys } from "./host-key-redaction.js";
import { PERSON_EXEC_ENV, PERSON_GID, personShellArgv, STAGE_RC_SCRIPT } from "./person-shell-confinement.js";
import { PersonShellMarkers, personShellRc } from "./person-shell-markers.js";
import { requireBox, type SessionTarget } from "./session-target.js";

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
    args: { box: box.id.slice(0, 12), user: `${BOX_USER}:${PERSON_GID}`, event: "start" },
    outcome: { ok: true },
    duration_ms: null,
    output_bytes: null,
  });
  const engine = await Engine.connect();
  const group = `${BOX_USER}:${PERSON_GID}`;
  const rcDir = await stageRc(engine, box.id, personShellRc(nonce));
  const term = await openTerminalExec(
    engine,
    box.id,
    personShellArgv(`${rcDir}/rc`, process.env.TERM || "xterm-256color"),
    {
      user: group,
      workdir: WORKSPACE,
      env: PERSON_EXEC_ENV,
      cols: io.stdout.columns || 80,
      rows: io.stdout.rows || 24,
      input: true,
    },
  );
  const markers = new PersonShellMarkers(nonce);
  // A character split between two chunks is decoded whole.
  const utf8 = new StringDecoder("utf8");
  // A command's time and output are counted from the Enter that ran it to the report after it.
  let enteredAt = Date.now();
  let outputSinceEnter = 0;
  term.onData((chunk) => {
    const { output, commands } = markers.push(utf8.write(chunk));
    if (output) io.stdout.write(output);
    outputSinceEnter += Buffer.byteLength(output);
    for (const c of commands) {
      log(
        {
          tool: "person_command",
          args: { command: capText(c.command, MAX_COMMAND_CHARS) },
          outcome: { ok: c.exitCode === 0, exit_code: c.exitCode },
          duration_ms: Date.now() - enteredAt,
          output_bytes: outputSinceEnter,
        },
        enteredAt,
      );
    }
  });
  const raw = io.stdin.isTTY === true;
  if (raw) io.stdin.setRawMode(true);
  const onInput = (chunk: Buffer | string) => {
    const text = chunk.toString();
    if (text.includes("\r") || text.includes("\n")) {
      enteredAt = Date.now();
      outputSinceEnter = 0;
    }
    term.write(text);
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
  await engine
    .exec(box.id, ["/bin/rm", "-rf", "--", rcDir], { user: `0:${PERSON_GID}`, timeoutMs: 10_000 })
    .catch(() => undefined);
  log({
    tool: "person_shell",
    args: { box: box.id.slice(0, 12), user: `${BOX_USER}:${PERSON_GID}`, event: "end" },
    outcome: { ok: exitCode === 0, exit_code: exitCode },
    duration_ms: Date.now() - started,
    output_bytes: null,
  });
  return exitCode;
}

/**
 * Writes the rc where only the person's group can read it (see STAGE_RC_SCRIPT), as root in the
 * box: the nonce travels on the exec's stdin, so no environment or argument list ever holds it.
 */
async function stageRc(engine: Engine, boxId: string, rc: string): Promise<string> {
  const staged = await engine.exec(boxId, ["/bin/sh", "-c", STAGE_RC_SCRIPT], {
    user: `0:${PERSON_GID}`,
    env: PERSON_EXEC_ENV,
    stdin: rc,
    timeoutMs: 30_000,
  });
  const dir = staged.stdout.toString().trim();
  if (staged.exitCode !== 0 || !/^\/tmp\/\.drydock-person\.[A-Za-z0-9]+$/.test(dir)) {
    throw new DrydockError(
      "person_shell_failed",
      `could not prepare the person's shell in box ${boxId.slice(0, 12)}: ${staged.stderr.toString().trim() || `exit ${staged.exitCode}`}; is /tmp full? check with \`drydock sessions show\``,
    );
  }
  return dir;
}
