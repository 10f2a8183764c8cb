/** Where a box's checkpoints live in its git (see checkpoint-script.ts). */
export const CHECKPOINT_REFS = "refs/drydock/checkpoints";
/** Refs that keep alive the objects a checkpoint's refs name, so git never prunes them and a fork can send them. */
export const KEEP_REFS = "refs/drydock/keep";
