/**
 * Every error drydock raises on purpose. Messages say what was wrong and what to do next; the
 * server turns any of these into an `isError` tool result in one place.
 */
export class DrydockError extends Error {
  override name = "DrydockError";
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class EngineUnavailableError extends DrydockError {
  override name = "EngineUnavailableError";
  /** `fix`: what to do instead of starting Docker (a Kubernetes backend says how to reach its API). */
  constructor(
    /** What went wrong, without the advice: `drydock doctor` gives its own. */
    readonly detail: string,
    options?: { cause?: unknown; fix?: string },
  ) {
    super(
      "engine_unavailable",
      options?.fix
        ? `the engine does not answer (${detail}). ${options.fix}`
        : `no Docker Engine answers (${detail}). Start Docker (or run scripts/setup.sh as root), or point DOCKER_HOST at a running engine; check with \`drydock doctor\``,
      options,
    );
  }
}

/**
 * How to get an image the engine lacks, as a command that makes that very image: drydock's
 * sandbox image (`drydock-sandbox:…`) has its own verb, an environment image (`drydock-env:…`)
 * is built again by its environment's next use, and any other image is the user's to load or build.
 */
export function imageFix(image: string): string {
  if (/^drydock-sandbox(:|$)/.test(image)) return "build it with `drydock image build`";
  if (/^drydock-env(:|$)/.test(image)) {
    return "it is an environment image (`drydock env prune` may have removed it): the next session or eval that uses its environment builds it again";
  }
  return `load or build the image first: \`docker pull ${image}\` from a registry, \`docker load -i FILE.tar\` from a saved copy, or \`docker build -t ${image} DIR\``;
}

export class ImageMissingError extends DrydockError {
  override name = "ImageMissingError";
  constructor(readonly image: string) {
    super("image_missing", `image ${image} is not present in the engine; ${imageFix(image)}`);
  }
}

export class SessionNotFoundError extends DrydockError {
  override name = "SessionNotFoundError";
  constructor(readonly sessionId: string) {
    super(
      "session_not_found",
      `session ${sessionId} not found among yours: a session belongs to the client connection that created it. Create one with session_create, or omit session_id for your default session (session_list, where the server lists it, names yours); from a new connection, a server started with --keep-sessions hands a session back through session_resume with its session_secret`,
    );
  }
}

export class InvalidArgumentError extends DrydockError {
  override name = "InvalidArgumentError";
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super("invalid_argument", `${field}: ${problem}`);
  }
}

/**
 * A command-line flag (or argument) that cannot work, found before anything started: the CLI
 * exits with code 2 (a usage error), like other command-line tools.
 */
export class FlagError extends InvalidArgumentError {
  override name = "FlagError";
}

export class PathOutsideWorkspaceError extends DrydockError {
  override name = "PathOutsideWorkspaceError";
  constructor(
    readonly path: string,
    why = "it resolves outside /workspace",
  ) {
    super(
      "path_outside_workspace",
      `path ${JSON.stringify(path)} is refused: ${why}. Use a path under /workspace or relative to it`,
    );
  }
}

export class CommandTimeoutError extends DrydockError {
  override name = "CommandTimeoutError";
  constructor(
    readonly timeoutMs: number,
    readonly output: string,
  ) {
    super("command_timeout", `command did not finish within ${Math.round(timeoutMs / 1000)} s`);
  }
}

export class BoxGoneError extends DrydockError {
  override name = "BoxGoneError";
  constructor(
    readonly box: string,
    options?: { cause?: unknown },
  ) {
    super(
      "box_gone",
      `box ${box} is no longer running: it was stopped or removed outside drydock, and what was in it is lost. Remove its session with session_destroy and start a new one with session_create`,
      options,
    );
  }
}

export class CommandExitError extends DrydockError {
  override name = "CommandExitError";
  constructor(
    readonly exitCode: number,
    readonly output: string,
    what: string,
  ) {
    super("command_exit", `${what} failed with exit code ${exitCode}: ${output.trim().slice(-2000)}`);
  }
}

export class ApplyConflictError extends DrydockError {
  override name = "ApplyConflictError";
  constructor(
    readonly files: string[],
    detail: string,
  ) {
    super(
      "apply_conflict",
      `the diff does not apply cleanly to the host repository (files: ${files.join(", ") || "unknown"}); nothing on the host was changed. ${detail}`.trim(),
    );
  }
}

export class UnsafeDiffError extends DrydockError {
  override name = "UnsafeDiffError";
  constructor(reason: string) {
    super("unsafe_diff", `the diff was refused before anything was applied: ${reason}`);
  }
}

export class LimitExceededError extends DrydockError {
  override name = "LimitExceededError";
  constructor(message: string) {
    super("limit_exceeded", message);
  }
}

export class NotFoundError extends DrydockError {
  override name = "NotFoundError";
  constructor(message: string) {
    super("not_found", message);
  }
}

/** A message fit for a user: our own errors as they are, anything else with its name. */
export function describeError(error: unknown): string {
  if (error instanceof DrydockError) return error.message;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

export class InvalidJsonError extends DrydockError {
  override name = "InvalidJsonError";
  constructor(
    readonly line: number,
    readonly column: number,
    detail: string,
  ) {
    super(
      "invalid_json",
      `the file is not valid JSON at line ${line} column ${column}: ${detail}. Nothing was changed; view the lines around it with file_editor and fix them there`,
    );
  }
}

export class BinaryFileError extends DrydockError {
  override name = "BinaryFileError";
  constructor(
    readonly path: string,
    why = "it holds NUL bytes",
  ) {
    super(
      "binary_file",
      `${path} looks like a binary file (${why}); text tools refuse it. Inspect it with bash (xxd, file) instead`,
    );
  }
}

/**
 * A task-stack rule refused the operation (no current task, open sub-tasks, a completed task), or a
 * stored stack could not be read or saved. `code` names which.
 */
export class TaskStackError extends DrydockError {
  override name = "TaskStackError";
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * A file an environment build would read that drydock refuses to open: a link, a FIFO or device,
 * or one too large. Names the file and the fix, never what the file (or its target) holds.
 */
export class EnvironmentFileError extends DrydockError {
  override name = "EnvironmentFileError";
  constructor(
    readonly file: string,
    problem: string,
    fix: string,
  ) {
    super("unsafe_environment_file", `${file}: ${problem}; ${fix}`);
  }
}

/**
 * A checkpoint that cannot be restored or forked as it was saved: its data in the box was changed
 * or removed (the box is the agent's), so nothing was restored.
 */
export class CheckpointDamagedError extends DrydockError {
  override name = "CheckpointDamagedError";
  constructor(name: string, detail: string) {
    super(
      "checkpoint_damaged",
      `checkpoint ${JSON.stringify(name)} cannot be restored: ${detail}. Nothing was changed; take a new checkpoint with session_checkpoint, or restore another (session_checkpoints lists them)`,
    );
  }
}
