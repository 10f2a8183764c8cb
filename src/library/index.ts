/** The library API: sandboxes for orchestrators, in-process or against `drydock serve --http`. */
export { Drydock } from "./drydock.js";
export type { CreateOptions, LocalOptions, RemoteOptions } from "./drydock.js";
export { Sandbox } from "./sandbox.js";
export type { FileOptions, ListOptions, RunOptions } from "./sandbox.js";
export type {
  AppliedChanges,
  ApplyTarget,
  CheckpointInfo,
  CheckpointOptions,
  CommandResult,
  FileEntry,
  RestoredCheckpoint,
  OutputStream,
  SandboxDiff,
  SandboxInfo,
} from "./sandbox-backend.js";
export { ServerUnreachableError } from "./remote-client.js";
