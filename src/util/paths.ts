import { homedir } from "node:os";
import { join } from "node:path";

/** Where drydock keeps state on the host (task stacks, tokens, logs): never inside a box. */
export function stateDir(): string {
  if (process.env.DRYDOCK_STATE_DIR) return process.env.DRYDOCK_STATE_DIR;
  const base = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(base, "drydock");
}
