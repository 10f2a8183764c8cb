/** The flag that copies untracked dependency trees into boxes, as `serve` and `run` take it. */
export const INCLUDE_UNTRACKED_DEPENDENCIES_FLAG = "--include-untracked-dependencies";

export const INCLUDE_UNTRACKED_DEPENDENCIES_HELP =
  "copy untracked, unignored dependency trees (node_modules, a virtualenv with pyvenv.cfg, Cargo's target, ...) into the box too; by default they are left out and the start says which";
