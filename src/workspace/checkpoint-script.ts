/**
 * The bash that saves, restores, exports and imports a workspace's checkpoints inside its box.
 * Pure text: the box runs it, the host reads back only short, checked lines.
 *
 * A checkpoint is one commit K under refs/drydock/checkpoints/<slot>, its parent the session's
 * base, its tree holding:
 *   w  the working tree (every file not ignored, or every file with include_ignored), written
 *      with a private index, so the agent's index never changes;
 *   i  the agent's index file, byte for byte (absent when there is none);
 *   h  what HEAD is: "ref: refs/heads/x" or a commit id;
 *   r  every ref but drydock's own, one "<object> <name>" a line.
 * The objects the refs name are kept alive by refs/drydock/keep/<slot>/<n>, so git never prunes
 * them, and a fork can send them. Only what differs from the base is new in git's store: the cost
 * follows the change, not the repository.
 */
import { ADD_CHANGES } from "./changed-paths.js";
import { CHECKPOINT_REFS, KEEP_REFS } from "./checkpoint-refs.js";
import { FORK_FUNCTIONS } from "./fork-script.js";
import { BASE_REF, DIFF_INDEX } from "./snapshot-receiver.js";
import { boxScript } from "../util/box-script.js";

export { CHECKPOINT_REFS, KEEP_REFS };
/** A restore's and an include_ignored checkpoint's own index: the diff's index is not theirs to spoil. */
export const WORK_INDEX = "/tmp/.drydock-checkpoint-index";
/**
 * Where the session's shell state passes between the shell and the box channel (see
 * session/shell-state.ts): the working directory, NUL, \`compgen -e\`, NUL, \`export -p\`, NUL.
 */
export const SHELL_STATE_FILE = "/tmp/.drydock-shell-state";
/** The most bytes of it a save hands to the host: 384 KiB (512 KiB as base64), and one to tell it is over. */
export const MAX_SHELL_STATE_FILE_BYTES = 384 * 1024 + 1;

export const CHECKPOINT_SCRIPT = boxScript("workspace/checkpoint.sh", {
  ADD_CHANGES,
  FORK_FUNCTIONS,
  BASE_REF,
  CHECKPOINT_REFS,
  DIFF_INDEX,
  KEEP_REFS,
  MAX_SHELL_STATE_FILE_BYTES,
  SHELL_STATE_FILE,
  WORK_INDEX,
});
