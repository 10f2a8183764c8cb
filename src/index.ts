export { AiderBridge } from "./client/aider-bridge.js";
export type { AiderBridgeOptions, AiderProgress, CallAiderToolOptions } from "./client/aider-bridge.js";
export type { AiderServerConfig, HttpServerConfig, StdioServerConfig } from "./client/server-config.js";
export type { FailureReason, TaskResult, TaskStatus } from "./client/task-result.js";
export type { ContextSource, FileContext, SetFileContextResult } from "./client/file-context.js";
export { RepoFileAccess } from "./client/file-access.js";
export type { FileAccess, FileCheck } from "./client/file-access.js";
export { RepoMemory } from "./client/repo-memory.js";
export type { RepoMemoryOptions } from "./client/repo-memory.js";
export type {
  AssociativeMatchResult,
  ContextGenerationInput,
  ContextMatch,
  MemorySystem,
} from "./client/memory-system.js";
export { Drydock, Sandbox, ServerUnreachableError } from "./library/index.js";
export type {
  AppliedChanges,
  ApplyTarget,
  CommandResult,
  CreateOptions,
  FileEntry,
  FileOptions,
  ListOptions,
  LocalOptions,
  OutputStream,
  RemoteOptions,
  RunOptions,
  SandboxDiff,
  SandboxInfo,
} from "./library/index.js";
export {
  ApplyConflictError,
  BinaryFileError,
  BoxGoneError,
  CommandExitError,
  CommandTimeoutError,
  DrydockError,
  EngineUnavailableError,
  ImageMissingError,
  InvalidArgumentError,
  LimitExceededError,
  NotFoundError,
  PathOutsideWorkspaceError,
  SessionNotFoundError,
  UnsafeDiffError,
} from "./util/errors.js";
