/**
 * The fork half of the checkpoint script (checkpoint-script.ts, which runs it): a checkpoint taken
 * out of its box as a pack (export), brought into a new box and restored there (import), what a
 * new box holds already (tips), and the agent's index as a delta of records or made fresh from
 * the new box's own stat data. Pure text: bash functions, read by the script before it dispatches
 * on its operation, and calling the script's own (open_checkpoint, restore, keep_updates, ...).
 */
import { CHECKPOINT_REFS, KEEP_REFS } from "./checkpoint-refs.js";
import { BASE_REF, DIFF_INDEX, PREFILLED_MARK } from "./snapshot-receiver.js";
import { boxScript } from "../util/box-script.js";

export const FORK_FUNCTIONS = boxScript("workspace/fork-functions.sh", {
  BASE_REF,
  CHECKPOINT_REFS,
  DIFF_INDEX,
  KEEP_REFS,
  PREFILLED_MARK,
});
