import { createHash } from "node:crypto";
import { z } from "zod";
import { findInvariantViolations } from "./task-stack-invariants.js";
import { taskStackStateSchema, type TaskStackState } from "./task-stack-state.js";

/** Marks a file as ours, so a stray JSON file in the directory is never taken for a stack. */
export const taskStackFileFormat = "drydock-task-stack";

const envelopeSchema = z.object({
  format: z.literal(taskStackFileFormat),
  version: z.literal(1),
  session_id: z.string(),
  saved_at: z.iso.datetime(),
  /** sha256 of JSON.stringify(state): catches a file that was cut short or edited by hand. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  state: z.unknown(),
});

export type DecodedTaskStackFile =
  { ok: true; sessionId: string; savedAt: string; state: TaskStackState } | { ok: false; problem: string };

/** The text of a stack file: an envelope naming the session, with a checksum over the state. */
export function encodeTaskStackFile(sessionId: string, state: TaskStackState, savedAt: Date): string {
  const envelope = {
    format: taskStackFileFormat,
    version: 1,
    session_id: sessionId,
    saved_at: savedAt.toISOString(),
    sha256: checksum(state),
    state,
  };
  return JSON.stringify(envelope, null, 2) + "\n";
}

/** Reads a stack file back, or says in a phrase what is wrong with it. */
export function decodeTaskStackFile(text: string): DecodedTaskStackFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `not valid JSON, probably cut short (${(error as Error).message})` };
  }
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) return { ok: false, problem: "not a drydock task stack file (unexpected envelope)" };
  // Over the state exactly as read: JSON.parse keeps key order, so this re-creates the bytes hashed.
  if (checksum(envelope.data.state) !== envelope.data.sha256) {
    return { ok: false, problem: "checksum mismatch: the file was changed or only partly written" };
  }
  const state = taskStackStateSchema.safeParse(envelope.data.state);
  if (!state.success) return { ok: false, problem: `malformed task data (${z.prettifyError(state.error)})` };
  const problems = findInvariantViolations(state.data);
  if (problems.length > 0) return { ok: false, problem: `inconsistent task data (${problems.join("; ")})` };
  return {
    ok: true,
    sessionId: envelope.data.session_id,
    savedAt: envelope.data.saved_at,
    state: state.data,
  };
}

function checksum(state: unknown): string {
  return createHash("sha256").update(JSON.stringify(state)).digest("hex");
}
