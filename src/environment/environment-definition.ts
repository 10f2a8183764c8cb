/**
 * What a repository asks of its box, whatever file said it: a base to build on, Debian packages,
 * variables, setup commands run with the network at build time, and the files whose contents
 * key the cache. Both `.drydock/environment.yaml` and `.devcontainer/devcontainer.json` are read
 * into this one shape, so the build plan knows nothing of either format.
 */
import { DrydockError } from "../util/errors.js";

export const DRYDOCK_ENVIRONMENT_FILE = ".drydock/environment.yaml";
export const DEVCONTAINER_FILES = [".devcontainer/devcontainer.json", ".devcontainer.json"] as const;

/** Files that usually pin a project's dependencies: the cache key when a definition names none. */
export const DEFAULT_KEY_FILES = [
  "package.json",
  "package-lock.json",
  "npm-shrinkwrap.json",
  "yarn.lock",
  "pnpm-lock.yaml",
  "requirements*.txt",
  "requirements/*.txt",
  "constraints*.txt",
  "pyproject.toml",
  "setup.py",
  "setup.cfg",
  "poetry.lock",
  "uv.lock",
  "Pipfile.lock",
  "go.mod",
  "go.sum",
  "Cargo.toml",
  "Cargo.lock",
  "Gemfile.lock",
  "pom.xml",
  "build.gradle",
  "build.gradle.kts",
];

/** Where a value came from, for error messages: `file:line`. */
export interface SourceRef {
  file: string;
  line: number;
  /**
   * The definition is written inside another file (an eval task's `environment`): `file` names
   * the task ("tasks.jsonl:3") and `line` is a line of the definition itself, not of that file.
   */
  inline?: boolean;
}

/** `file:line`, or for an inline definition "tasks.jsonl:3: environment, line 2 of the definition". */
export function formatSource(ref: SourceRef): string {
  if (ref.inline) {
    return ref.line > 0
      ? `${ref.file}: environment, line ${ref.line} of the definition`
      : `${ref.file}: environment`;
  }
  return ref.line > 0 ? `${ref.file}:${ref.line}` : ref.file;
}

export interface SetupStep {
  /** A shell command (bash -e). */
  command: string;
  /** Where it is defined; also names the step in progress lines and errors. */
  from: SourceRef;
  /** What it is, for messages: "setup[2]", "postCreateCommand". */
  label: string;
}

export type EnvironmentBase =
  | { kind: "sandbox" }
  /** An image the engine already has (devcontainer `image`). */
  | { kind: "image"; ref: string; from: SourceRef }
  /** A Dockerfile in the repository, built first (devcontainer `build`). */
  | {
      kind: "dockerfile";
      /** Repository-relative paths. */
      dockerfile: string;
      context: string;
      args: Record<string, string>;
      target?: string;
      from: SourceRef;
    };

export interface EnvironmentDefinition {
  /** "default" when the repository defines nothing. */
  kind: "drydock" | "devcontainer" | "default";
  /** The repository-relative file it was read from (absent for the default). */
  file?: string;
  base: EnvironmentBase;
  packages: string[];
  env: Record<string, string>;
  setup: SetupStep[];
  /** Globs (repository-relative) whose files' contents key the cache. */
  keyFiles: string[];
  /** Parts of the source format drydock does not apply, each in words for the user. */
  warnings: string[];
}

/** A definition that cannot be used: names the file, the line and the fix. */
export class EnvironmentDefinitionError extends DrydockError {
  constructor(
    readonly at: SourceRef,
    problem: string,
    fix: string,
  ) {
    super("invalid_environment", `${formatSource(at)}: ${problem}; ${fix}`);
  }
  override name = "EnvironmentDefinitionError";
}

/** A definition that asks for nothing yet: the sandbox image, the default key files. */
export function emptyDefinition(kind: EnvironmentDefinition["kind"], file?: string): EnvironmentDefinition {
  return {
    kind,
    file,
    base: { kind: "sandbox" },
    packages: [],
    env: {},
    setup: [],
    keyFiles: kind === "default" ? [] : [...DEFAULT_KEY_FILES],
    warnings: [],
  };
}

export function defaultDefinition(): EnvironmentDefinition {
  return emptyDefinition("default");
}

/** Debian package names (with an optional `=version`), as apt takes them. */
export const DEBIAN_PACKAGE = /^[a-z0-9][a-z0-9+.-]+(=[A-Za-z0-9.+~:-]+)?$/;
/** Environment variable names a shell can set. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
