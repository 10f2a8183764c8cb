/**
 * A workspace's checkpoints, kept in its box as git objects (checkpoint-script.ts): save, restore,
 * drop, and the export and import a fork moves them with. The host keeps only each checkpoint's
 * commit id; what it reads back from the box is a short line it checks, or a pack it passes on to
 * another box unopened. No path in the box is ever followed on the host.
 */
import type { Readable } from "node:stream";
import type { Box } from "../sandbox/box.js";
import { boxSh } from "../sandbox/box-channel.js";
import { CheckpointDamagedError, CommandExitError, LimitExceededError } from "../util/errors.js";
import {
  CHECKPOINT_REFS,
  CHECKPOINT_SCRIPT,
  KEEP_REFS,
  MAX_SHELL_STATE_FILE_BYTES,
  SHELL_STATE_FILE,
  WORK_INDEX,
} from "./checkpoint-script.js";
import { FORK_HELD_PACK_BYTES, streamPack, type PackAfterHead } from "./fork-pack-stream.js";
import { BASE_REF, DIFF_INDEX, PREFILLED_MARK } from "./snapshot-receiver.js";

/** Where a checkpoint lives in its box: a host-made name, never the one a client gave. */
export type CheckpointSlot = string;

export interface SavedCheckpoint {
  /** The checkpoint commit in the box. */
  commit: string;
  /** Bytes of the changed files (as they are now), the git index and the refs. */
  bytes: number;
  /** Paths that differ from the session's base. */
  files: number;
  /** With `shellState`: the bytes of SHELL_STATE_FILE, as the shell wrote them before the save. */
  shellState?: Buffer;
  /** The box's tree writer saved it, not the script (box-agent/drydock_box/tree.py). */
  byTreeWriter: boolean;
}

/** A checkpoint taken out of its box for a fork: the base commit's bytes and a pack of what the new box lacks. */
export interface CheckpointExport {
  commit: string;
  baseCommit: string;
  /** The base commit object, base64 (a fork's box has its tree, maybe not this commit). */
  baseRaw: string;
  /** The pack, when it is at most FORK_HELD_PACK_BYTES; else absent, and `streamPack` gives it. */
  pack?: Buffer;
  /**
   * For a pack past what the host holds: the source's box exports it again for each import, its
   * pack streamed into the new box (fork-pack-stream.ts). `signal` ends that export.
   */
  streamPack?: (signal: AbortSignal) => { pack: PackAfterHead; done: Promise<void> };
  includeIgnored: boolean;
  /** Whether the box channel's program made it, or the script did (box-agent/drydock_box/fork.py). */
  byChannel?: boolean;
}

/** What the box channel's program says on stderr of an export it made in the script's place. */
const EXPORTED_BY_CHANNEL = "exported by the box's program\n";

const SHA = /^[0-9a-f]{40}$/;
const TIMEOUT_MS = 120_000;

function run(
  box: Box,
  args: string[],
  what: string,
  options: {
    stdin?: Buffer | Readable;
    maxOutputBytes?: number;
    signal?: AbortSignal;
    changes?: boolean | "start";
    fast?: Record<string, string | number | boolean>;
  } = {},
) {
  return boxSh(box, CHECKPOINT_SCRIPT, args, {
    timeoutMs: TIMEOUT_MS,
    maxOutputBytes: options.maxOutputBytes ?? 64 * 1024,
    stdin: options.stdin,
    signal: options.signal,
    changes: options.changes ?? false,
    ...(options.fast ? { fast: options.fast } : {}),
  }).then((result) => {
    if (result.exitCode === 4) throw new CheckpointDamagedError(what, result.stderr.toString("utf8").trim());
    if (result.exitCode !== 0) {
      throw new CommandExitError(result.exitCode, result.stderr.toString("utf8"), `checkpoint ${what}`);
    }
    return result;
  });
}

/**
 * Saves the workspace (files, git index, refs, HEAD) as checkpoint `slot`; refuses, saving
 * nothing, when it holds more than `maxBytes` (see SavedCheckpoint.bytes). With `shellState`,
 * also hands back what the shell wrote to SHELL_STATE_FILE (at most MAX_SHELL_STATE_FILE_BYTES).
 */
export async function saveCheckpoint(
  box: Box,
  slot: CheckpointSlot,
  options: {
    name: string;
    includeIgnored: boolean;
    maxBytes: number;
    shellState?: boolean;
    signal?: AbortSignal;
  },
): Promise<SavedCheckpoint> {
  const result = await run(
    box,
    [
      "save",
      slot,
      options.includeIgnored ? "1" : "0",
      String(options.maxBytes),
      options.shellState ? "1" : "0",
    ],
    options.name,
    {
      signal: options.signal,
      maxOutputBytes: 64 * 1024 + MAX_SHELL_STATE_FILE_BYTES,
      // Without ignored files, the save brings the diff's index up to date (add_changes); a
      // session's first checkpoint starts the box's watch, for its later diffs and checkpoints.
      changes: options.includeIgnored ? false : "start",
      // The box's tree writer answers in the script's place when it can vouch for the working
      // tree (box-agent/drydock_box/tree.py); the names it writes are the script's.
      ...(options.includeIgnored
        ? {}
        : {
            fast: {
              op: "save",
              slot,
              max: options.maxBytes,
              shell: options.shellState === true,
              index: DIFF_INDEX,
              baseRef: BASE_REF,
              checkpointRefs: CHECKPOINT_REFS,
              keepRefs: KEEP_REFS,
              shellFile: SHELL_STATE_FILE,
              shellMax: MAX_SHELL_STATE_FILE_BYTES,
            },
          }),
    },
  );
  const newline = result.stdout.indexOf(10);
  const line = result.stdout
    .subarray(0, newline < 0 ? undefined : newline)
    .toString("utf8")
    .trim();
  const over = /^over (\d+) (\d+)$/.exec(line);
  if (over) {
    throw new LimitExceededError(
      `checkpoint ${JSON.stringify(options.name)} would hold ${Number(over[1]).toLocaleString("en-US")} bytes (${over[2]} changed files), over the limit of ${options.maxBytes.toLocaleString("en-US")} bytes per checkpoint; nothing was saved. Remove large generated files from the workspace (or add them to .gitignore), or ask the operator for a larger --checkpoint-max-mb`,
    );
  }
  const saved = /^saved ([0-9a-f]{40}) (\d+) (\d+)( fast)?$/.exec(line);
  if (!saved) throw new CommandExitError(0, line.slice(0, 200), `checkpoint ${options.name}: saving`);
  return {
    commit: saved[1]!,
    bytes: Number(saved[2]),
    files: Number(saved[3]),
    byTreeWriter: saved[4] !== undefined,
    ...(options.shellState ? { shellState: result.stdout.subarray(newline + 1) } : {}),
  };
}

/**
 * Puts the workspace back to checkpoint `slot`, which must still be `commit`; returns paths changed.
 * `shellState`: the bytes SHELL_STATE_FILE is to hold after, for the shell to read.
 */
export async function restoreCheckpoint(
  box: Box,
  slot: CheckpointSlot,
  options: {
    name: string;
    commit: string;
    includeIgnored: boolean;
    shellState?: Buffer;
    signal?: AbortSignal;
  },
): Promise<{ files: number; byChannel: boolean }> {
  const result = await run(
    box,
    [
      "restore",
      slot,
      options.commit,
      options.includeIgnored ? "1" : "0",
      "0",
      options.shellState ? "1" : "0",
    ],
    options.name,
    {
      signal: options.signal,
      ...(options.shellState ? { stdin: options.shellState } : {}),
      changes: !options.includeIgnored,
      // The box channel's program restores in the script's place when nothing is unusual
      // (box-agent/drydock_box/restore.py), with the script's names and the same answer.
      ...(options.includeIgnored
        ? {}
        : {
            fast: {
              op: "restore",
              slot,
              commit: options.commit,
              shell: options.shellState !== undefined,
              index: DIFF_INDEX,
              workIndex: WORK_INDEX,
              baseRef: BASE_REF,
              checkpointRefs: CHECKPOINT_REFS,
              shellFile: SHELL_STATE_FILE,
            },
          }),
    },
  );
  return parseRestored(result.stdout, options.name);
}

function parseRestored(stdout: Buffer, name: string): { files: number; byChannel: boolean } {
  const line = stdout.toString("utf8").trim().split("\n").pop() ?? "";
  const restored = /^restored (\d+)( fast)?$/.exec(line);
  if (!restored) throw new CommandExitError(0, line.slice(0, 200), `checkpoint ${name}: restoring`);
  return { files: Number(restored[1]), byChannel: restored[2] !== undefined };
}

/** Removes checkpoint `slot` from the box (its objects go at git's next prune). */
export async function dropCheckpoint(box: Box, slot: CheckpointSlot): Promise<void> {
  await run(box, ["drop", slot], "drop");
}

/**
 * What a new box holds whole, so a fork need not send it: the commits every ref names, and the
 * tree of `commit` (the fork's base on the host) when the box has that commit.
 */
export async function refTips(box: Box, commit?: string, signal?: AbortSignal): Promise<string[]> {
  const args = ["tips", "0", ...(commit !== undefined && SHA.test(commit) ? [commit] : [])];
  const result = await run(box, args, "tips", { maxOutputBytes: 8 * 1024 * 1024, signal });
  return result.stdout
    .toString("utf8")
    .split("\n")
    .filter((line) => SHA.test(line));
}

/**
 * Takes checkpoint `slot` out of its box for a fork: at most `maxBytes` of pack, the objects (the
 * base's included) that a box holding `have` (commits and trees, with all they reach) lacks. A
 * pack of at most `heldBytes` (default FORK_HELD_PACK_BYTES) comes back whole; a larger one is cut
 * there (the box's program stops git) and comes back as `streamPack`, to stream box to box.
 */
export async function exportCheckpoint(
  box: Box,
  slot: CheckpointSlot,
  options: {
    name: string;
    commit: string;
    baseCommit: string;
    includeIgnored: boolean;
    have: string[];
    maxBytes: number;
    heldBytes?: number;
    signal?: AbortSignal;
  },
): Promise<CheckpointExport> {
  const held = Math.min(options.maxBytes, options.heldBytes ?? FORK_HELD_PACK_BYTES);
  // Room for the two lines before the pack; past it the answer is cut (truncated).
  const cap = held + 1024 * 1024;
  const result = await run(
    box,
    ["export", slot, options.commit, options.includeIgnored ? "1" : "0"],
    options.name,
    {
      stdin: Buffer.from(options.have.join("\n") + "\n"),
      maxOutputBytes: cap,
      signal: options.signal,
      // The box channel's program exports in the script's place (box-agent/drydock_box/fork.py),
      // and stops once its answer passes `hold`, the cap.
      fast: {
        op: "export",
        hold: cap,
        slot,
        commit: options.commit,
        includeIgnored: options.includeIgnored,
        baseRef: BASE_REF,
        checkpointRefs: CHECKPOINT_REFS,
        keepRefs: KEEP_REFS,
      },
    },
  );
  if (result.truncated && held === options.maxBytes) {
    throw new LimitExceededError(
      `checkpoint ${JSON.stringify(options.name)} is larger than ${options.maxBytes} bytes once packed; nothing was forked`,
    );
  }
  const newline = result.stdout.indexOf(10);
  const baseRaw = result.stdout.subarray(0, Math.max(0, newline)).toString("latin1");
  if (newline < 0 || !/^[A-Za-z0-9+/=]+$/.test(baseRaw) || baseRaw.length > 96 * 1024) {
    throw new CheckpointDamagedError(options.name, "the box did not give its base commit");
  }
  // The commit the new box restores: the checkpoint's, or one made for forks (its index as a
  // delta); the new box checks that the pack holds it and all it needs.
  const second = result.stdout.indexOf(10, newline + 1);
  const commit = result.stdout.subarray(newline + 1, Math.max(newline + 1, second)).toString("latin1");
  if (second < 0 || !SHA.test(commit)) {
    throw new CheckpointDamagedError(options.name, "the box did not name the commit to fork");
  }
  const exported = {
    commit,
    baseCommit: options.baseCommit,
    baseRaw,
    includeIgnored: options.includeIgnored,
    byChannel: result.stderr.toString("utf8") === EXPORTED_BY_CHANNEL,
  };
  if (!result.truncated) return { ...exported, pack: result.stdout.subarray(second + 1) };
  return {
    ...exported,
    streamPack: (signal) =>
      streamPack(box, {
        slot,
        commit: options.commit,
        name: options.name,
        head: { baseRaw, commit },
        includeIgnored: options.includeIgnored,
        have: options.have,
        maxBytes: options.maxBytes,
        signal,
      }),
  };
}

/**
 * Brings an exported checkpoint into a new box as its `slot` and restores it there, whatever the
 * box's workspace holds (nothing yet, or a prefilled commit: only what differs is written).
 * Returns the paths written, whether the box's program did it, and the pack's bytes.
 */
export async function importCheckpoint(
  box: Box,
  slot: CheckpointSlot,
  checkpoint: CheckpointExport,
  options: { name: string; signal?: AbortSignal },
): Promise<{ files: number; byChannel: boolean; packBytes: number }> {
  if (checkpoint.pack === undefined) return importStreamed(box, slot, checkpoint, options);
  const result = await run(box, importArgs(slot, checkpoint), options.name, {
    stdin: checkpoint.pack,
    signal: options.signal,
    // The box channel's program imports in the script's place when the box holds files and
    // the checkpoint's index is a delta (box-agent/drydock_box/fork.py).
    ...(checkpoint.includeIgnored
      ? {}
      : {
          fast: {
            op: "import",
            slot,
            commit: checkpoint.commit,
            baseCommit: checkpoint.baseCommit,
            baseRaw: checkpoint.baseRaw,
            index: DIFF_INDEX,
            workIndex: WORK_INDEX,
            prefilledMark: PREFILLED_MARK,
            baseRef: BASE_REF,
            checkpointRefs: CHECKPOINT_REFS,
            keepRefs: KEEP_REFS,
          },
        }),
  });
  return { ...parseRestored(result.stdout, options.name), packBytes: checkpoint.pack.length };
}

function importArgs(slot: CheckpointSlot, checkpoint: CheckpointExport): string[] {
  return [
    "import",
    slot,
    checkpoint.commit,
    checkpoint.baseCommit,
    checkpoint.includeIgnored ? "1" : "0",
    checkpoint.baseRaw,
  ];
}

/**
 * The import of a pack that streams from the source's box (fork-pack-stream.ts): the script
 * imports it (the box's program reads its input whole) from an exec's stdin, while the source's
 * box exports it; when either fails, the other is ended.
 */
async function importStreamed(
  box: Box,
  slot: CheckpointSlot,
  checkpoint: CheckpointExport,
  options: { name: string; signal?: AbortSignal },
): Promise<{ files: number; byChannel: boolean; packBytes: number }> {
  if (checkpoint.streamPack === undefined) {
    throw new CheckpointDamagedError(options.name, "its export holds no pack");
  }
  const ending = new AbortController();
  const end = () => ending.abort();
  options.signal?.addEventListener("abort", end, { once: true });
  if (options.signal?.aborted) end();
  const { pack, done } = checkpoint.streamPack(ending.signal);
  try {
    const [result] = await Promise.all([
      run(box, importArgs(slot, checkpoint), options.name, { stdin: pack, signal: ending.signal }),
      done,
    ]);
    return { ...parseRestored(result.stdout, options.name), packBytes: pack.bytes };
  } catch (error) {
    end();
    pack.destroy();
    throw error;
  } finally {
    options.signal?.removeEventListener("abort", end);
  }
}
