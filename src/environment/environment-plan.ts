/**
 * The build plan of an environment image: its cache key and the Dockerfile that makes it. Pure:
 * the same source, definition, key files and base images give the same tag and the same text.
 *
 * The key holds what fixes everything a build reads. A build reads the whole repository (setup
 * such as `pip install -e .` needs the source), so the key holds, for a commit, the id of the
 * root tree its files were read from, every object on the way checked against its id (so no
 * replace ref, graft or misnamed object in one clone can make that id stand for other files):
 * eval tasks at one commit share one image, whatever clone they run in. For the working tree it holds the repository's identity (its real top directory
 * and its `.git`'s device, inode and birth time) rather than a hash of every file: sessions of one
 * repository keep one image across edits of files that are not key files (hashing the whole tree
 * would rebuild on every edit), while an image built from one repository is never another's, so
 * nothing one repository's setup made (a `conftest.py`, a fake `/opt/venv/bin/pytest`) reaches a
 * box of another. Within one repository a change that setup depends on belongs in `key_files`.
 *
 * The image is the base with the Debian packages and variables, then the repository copied to
 * /workspace and one run, as the box user with the network and the build's CA bundle, of the setup
 * commands and the prepare step, which moves what they made in the repository (a `node_modules`,
 * an `.egg-info`, a built extension) to /opt/drydock/env/prepared and writes the links a box lays
 * over its copy of the repository. Pip, Go and Cargo install into /opt/venv, /opt/go, /opt/cargo.
 */
import { createHash } from "node:crypto";
import type { EnvironmentDefinition, SetupStep } from "./environment-definition.js";

export const ENV_IMAGE_REPO = "drydock-env";
/** The label holding an environment image's whole cache key. */
export const KEY_LABEL = "drydock.env.key";
/** Bumped when the recipe below changes, so images made by an older recipe are rebuilt. */
export const RECIPE_VERSION = "2";
/** Where the build's CA bundle sits during the build (removed from the final image). */
export const BUILD_CA = "/etc/drydock/build-ca.crt";
/** Directories setup may write outside the repository, owned by the box user during the build. */
export const KEPT_DIRS = ["/opt/venv", "/opt/go", "/opt/cargo"] as const;

/** Variables that make the usual tools trust the build's CA bundle (a TLS-intercepting proxy). */
export const CA_ENV = [
  "SSL_CERT_FILE",
  "REQUESTS_CA_BUNDLE",
  "PIP_CERT",
  "NODE_EXTRA_CA_CERTS",
  "CURL_CA_BUNDLE",
  "GIT_SSL_CAINFO",
  "CARGO_HTTP_CAINFO",
].map((name) => `${name}=${BUILD_CA}`);

export interface KeyFile {
  path: string;
  sha256: string;
}

export interface PlanInputs {
  definition: EnvironmentDefinition;
  /** The definition file's bytes as read (any change rebuilds). */
  definitionText: string;
  /** For a Dockerfile base: the Dockerfile's text. */
  dockerfileText?: string;
  /** The files the key globs matched, with their content hashes. */
  keyFiles: KeyFile[];
  /** The id of the sandbox image (or of the devcontainer `image`) the environment builds on. */
  baseImageId: string;
  /** The ids of the images a Dockerfile base names (FROM, COPY --from), by reference. */
  dockerfileImageIds?: Record<string, string>;
  /** What fixes the repository's bytes the build reads: `tree <id>` or `repository <identity>`. */
  source: string;
  /** A definition from outside the repository: keyed by its text, not by where it was written. */
  inline?: boolean;
}

export interface EnvironmentPlan {
  /** 12 hex digits of the cache key. */
  hash: string;
  /**
   * The whole cache key (64 hex digits), carried by the image as KEY_LABEL: a tag holds only 48
   * bits, which a repository could grind its definition (or an eval task its commit) to match.
   */
  key: string;
  tag: string;
  /** What the cache key is made of, in words, for `drydock env show`. */
  keyedBy: string[];
}

export function planEnvironment(inputs: PlanInputs): EnvironmentPlan {
  const { definition } = inputs;
  const hash = createHash("sha256");
  const part = (label: string, value: string) => hash.update(label).update("\0").update(value).update("\0");
  part("recipe", RECIPE_VERSION);
  part("source", inputs.source);
  part("base", inputs.baseImageId);
  const imageRefs = Object.keys(inputs.dockerfileImageIds ?? {}).sort();
  for (const ref of imageRefs) part(`image:${ref}`, inputs.dockerfileImageIds![ref]!);
  // A file's path is part of what it means (a devcontainer's paths are relative to it); an inline
  // definition's "file" is where a task file wrote it, which changes nothing that is built.
  part("definition", `${inputs.inline ? "(inline)" : (definition.file ?? "")}\n${inputs.definitionText}`);
  if (inputs.dockerfileText !== undefined) part("dockerfile", inputs.dockerfileText);
  const keyFiles = [...inputs.keyFiles].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const f of keyFiles) part(`key:${f.path}`, f.sha256);
  const key = hash.digest("hex");
  const digest = key.slice(0, 12);
  const short = (id: string) => id.replace(/^sha256:/, "").slice(0, 12);
  const keyedBy = [
    inputs.source.startsWith("tree ")
      ? `the ${inputs.source} (the commit's files, every object checked against its id)`
      : `this repository (its identity ${inputs.source.slice("repository ".length, "repository ".length + 12)}: no other repository shares the image)`,
    `the base image ${short(inputs.baseImageId)}`,
    ...imageRefs.map((ref) => `the image ${ref} (${short(inputs.dockerfileImageIds![ref]!)})`),
    ...(inputs.inline ? ["the inline definition's text"] : definition.file ? [definition.file] : []),
    ...(definition.base.kind === "dockerfile" ? [definition.base.dockerfile] : []),
    ...keyFiles.map((f) => f.path),
  ];
  return { hash: digest, key, tag: `${ENV_IMAGE_REPO}:${digest}`, keyedBy };
}

/** One Dockerfile instruction per line; JSON exec form keeps commands exactly as written. */
const json = (value: unknown) => JSON.stringify(value);

/** Where the build's own files sit in the image while it is built (removed after). */
export const BUILD_DIR = "/opt/drydock/env-build";
/** The line the runner prints before each setup step, and the one it prints when a step fails. */
export const STEP_MARKER = /^drydock: setup step (\d+)(?: failed with exit code (\d+))?/;

/** The build context's files besides the repository, and what names its steps. */
export interface BuildFile {
  dockerfile: string;
  /** Files of the build context (path → text): the runner and one script per setup step. */
  files: Record<string, string>;
  /** The Dockerfile's instructions that run a definition step (by 1-based number): packages. */
  instructionSteps: Array<SetupStep | undefined>;
  /** The setup steps, by the number the runner prints (1-based). */
  setupSteps: SetupStep[];
}

/**
 * The Dockerfile of an environment and the runner of its setup. One stage: the base with the
 * packages and variables, then the repository copied to /workspace and ONE run of the setup
 * commands and the prepare step (so what setup makes is moved within one layer, never copied,
 * and stored once). The runner marks each step, so a failure still names its step.
 */
export function environmentDockerfile(
  definition: EnvironmentDefinition,
  baseImage: string,
  labels: Record<string, string>,
): BuildFile {
  const lines: string[] = [];
  const instructionSteps: Array<SetupStep | undefined> = [undefined];
  const add = (line: string, step?: SetupStep) => {
    lines.push(line);
    instructionSteps.push(step);
  };
  add(`FROM ${baseImage}`);
  add("USER root");
  add(`COPY ca-bundle.crt ${BUILD_CA}`);
  if (definition.packages.length > 0) {
    const install =
      "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends " +
      definition.packages.join(" ") +
      " && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb";
    add(`RUN ${json(["env", ...CA_ENV, "bash", "-e", "-o", "pipefail", "-c", install])}`, {
      command: `apt-get install ${definition.packages.join(" ")}`,
      from: { file: definition.file ?? "", line: 0 },
      label: "packages",
    });
  }
  const dirs = [...KEPT_DIRS, "/opt/drydock/env", "/opt/drydock/env/prepared"];
  add(`RUN ${json(["sh", "-c", `install -d -o 1000 -g 1000 ${dirs.join(" ")}`])}`);
  const env = Object.entries(definition.env);
  if (env.length > 0) add(`ENV ${env.map(([k, v]) => `${k}=${json(v)}`).join(" ")}`);
  add("COPY --chown=1000:1000 repo/ /workspace/");
  add(`COPY env-build/ ${BUILD_DIR}/`);
  add("USER 1000");
  add("WORKDIR /workspace");
  add(`RUN ${json(["bash", `${BUILD_DIR}/run.sh`])}`);
  add("USER root");
  add(`RUN ${json(["rm", "-rf", BUILD_DIR, BUILD_CA])}`);
  const labelText = Object.entries(labels)
    .map(([k, v]) => `${json(k)}=${json(v)}`)
    .join(" ");
  if (labelText) add(`LABEL ${labelText}`);
  add("USER 1000");
  add("WORKDIR /workspace");

  const files: Record<string, string> = {};
  const runner = [
    "#!/bin/bash",
    "# Runs an environment's setup steps in order, then the prepare step, in one layer.",
    "set -u",
    ...CA_ENV.map((v) => `export ${v}`),
    // A git repository of exactly what was copied, so setup tools that ask git (setuptools-scm)
    // get an answer and the prepare step can tell what setup made from what was there.
    "git init -q && git add -A && git -c user.name=drydock -c user.email=drydock@localhost commit -q --no-verify --allow-empty -m 'environment build' || exit 1",
  ];
  definition.setup.forEach((step, i) => {
    const n = i + 1;
    files[`env-build/step-${n}.sh`] = step.command.endsWith("\n") ? step.command : `${step.command}\n`;
    runner.push(
      `echo ${shellWord(`drydock: setup step ${n}: ${step.label}`)}`,
      // stderr into stdout: one pipe keeps a step's lines in order after its marker in the
      // build's log, so a failure's tail holds what the step printed (two pipes could reorder).
      `bash -e -o pipefail ${BUILD_DIR}/step-${n}.sh </dev/null 2>&1 || { rc=$?; echo "drydock: setup step ${n} failed with exit code $rc"; exit $rc; }`,
      "cd /workspace",
    );
  });
  runner.push(`bash ${BUILD_DIR}/prepare.sh`, "find /workspace -mindepth 1 -delete", "");
  files["env-build/run.sh"] = runner.join("\n");
  return { dockerfile: `${lines.join("\n")}\n`, files, instructionSteps, setupSteps: definition.setup };
}

function shellWord(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Matches repository-relative paths against a glob: `*` and `?` within a path segment, `**` across
 * segments. Hand-written (a dozen lines) rather than a dependency: key-file globs need no more.
 */
export function globMatcher(glob: string): (path: string) => boolean {
  let pattern = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      const slash = glob[i + 2] === "/";
      pattern += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") pattern += "[^/]*";
    else if (c === "?") pattern += "[^/]";
    else pattern += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  const re = new RegExp(`^${pattern}$`);
  return (path) => re.test(path);
}
