/**
 * `drydock sessions diff` and `drydock sessions apply` from another process than the server: the
 * diff is taken out of the box the same way the session_diff tool takes it, and applied with the
 * code session_apply uses, from what the session's record says about its repository.
 */
import type { BoxEngine } from "../engine/box-engine.js";
import { Box } from "../sandbox/box.js";
import { closeBoxChannel } from "../sandbox/box-channel.js";
import { boxLimits } from "../sandbox/box-profile.js";
import { errorOutcome, type AuditOutcome } from "../session/audit-entry.js";
import { appendAuditEntry } from "../session/audit-log.js";
import type { FinalDiff } from "../session/final-diff.js";
import { applySessionDiff, type SessionApplyOptions } from "../session/session-apply.js";
import { describeError, NotFoundError } from "../util/errors.js";
import { diffOut, diffStat } from "../workspace/box-workspace.js";
import type { ApplyResult } from "../workspace/apply-diff.js";
import { redactHostKeys } from "./host-key-redaction.js";
import { requireBox, type SessionTarget } from "./session-target.js";

/** The session's box, to run the diff in. */
function boxOf(engine: BoxEngine, target: SessionTarget, verb: string): Box {
  const summary = requireBox(target, verb);
  const image = target.record?.image ?? "";
  return Box.adopt(engine, summary.id, target.id, image, boxLimits({ image }));
}

/**
 * The box's diff keeps a private index, which git locks while the server's own diff runs: a diff
 * that finds it locked waits for it, up to 10 s.
 */
async function retryLocked<T>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await run();
    } catch (error) {
      if (!/index\.lock/.test((error as Error).message) || Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** The unified diff (binary-safe) of everything changed in the box, as bytes. */
export function sessionDiff(engine: BoxEngine, target: SessionTarget): Promise<Buffer> {
  return inBox(engine, target, (box) => diffOut(box));
}

export function sessionDiffStat(engine: BoxEngine, target: SessionTarget): Promise<string> {
  return inBox(engine, target, (box) => diffStat(box));
}

/** Runs `take` on the session's box; the channel it may open into the box is closed after. */
async function inBox<T>(
  engine: BoxEngine,
  target: SessionTarget,
  take: (box: Box) => Promise<T>,
): Promise<T> {
  const box = boxOf(engine, target, "diff");
  try {
    return await retryLocked(() => take(box));
  } finally {
    closeBoxChannel(box);
  }
}

/** What a person is told (on stderr) when the diff printed is the one kept at the session's end. */
export function keptDiffNote(id: string, kept: FinalDiff): string {
  const cut =
    kept.cutFromBytes === undefined
      ? ""
      : ` It was cut: the whole diff was ${kept.cutFromBytes} bytes, and what is printed does not apply.`;
  return `session ${id} has ended and its box is gone: this is its last diff, kept when it ended.${cut}`;
}

/** Applies the box's diff to the session's repository, and logs it as the person's. */
export async function applySession(
  engine: BoxEngine,
  target: SessionTarget,
  options: SessionApplyOptions,
): Promise<ApplyResult> {
  const record = target.record;
  if (!record) {
    throw new NotFoundError(
      `session ${target.id} has no record of its repository in the state directory (it was made by an older drydock, or pruned); take the diff with \`drydock sessions diff ${target.id} > changes.patch\` and apply it with \`git apply\``,
    );
  }
  const mode = options.mode ?? "branch";
  if (mode === "branch" && !record.host_base_commit) {
    throw new NotFoundError(
      `session ${target.id}'s record does not say which host commit it started from (it was made by an older drydock); apply into the working tree with --worktree`,
    );
  }
  redactHostKeys();
  const diff = await sessionDiff(engine, target);
  const started = Date.now();
  const log = (outcome: AuditOutcome) =>
    appendAuditEntry(
      {
        ts: new Date(started).toISOString(),
        session: target.id,
        actor: "person",
        tool: "apply",
        args: { mode, ...(options.branch ? { branch: options.branch } : {}), repo: record.repo },
        outcome,
        duration_ms: Date.now() - started,
        output_bytes: diff.length,
      },
      target.state,
    );
  try {
    const result = await applySessionDiff(
      { id: target.id, repo: record.repo, hostBaseCommit: record.host_base_commit },
      diff,
      options,
    );
    log({
      ok: true,
      mode: result.mode,
      files: result.files.length,
      ...(result.branch ? { branch: result.branch } : {}),
      ...(result.commit ? { commit: result.commit } : {}),
    });
    return result;
  } catch (error) {
    log(errorOutcome(describeError(error)));
    throw error;
  }
}
