/**
 * The build plan of an environment image: its cache key and the Dockerfile that makes it. Pure:
 * the same definition, key files and base give the same tag and the same text.
 *
 * The Dockerfile has three stages. `tools` is the base with the Debian packages and variables.
 * `setup` copies the repository to /workspace and runs the setup commands there as the box user,
 * with the network and the build's CA bundle, then moves what they made in the repository (a
 * `node_modules`, an `.egg-info`, a built extension) to /opt/drydock/env/prepared and writes the
 * links a box lays over its copy of the repository. The final stage is `tools` again plus the
 * directories setup may write to (/opt/venv, /opt/go, /opt/cargo, /opt/drydock/env): the
 * repository snapshot and the build's scratch stay behind in `setup`, so they cost no space.
 */
import { createHash } from "node:crypto";
import type { EnvironmentDefinition, SetupStep } from "./environment-definition.js";

export const ENV_IMAGE_REPO = "drydock-env";
/** Bumped when the recipe below changes, so images made by an older recipe are rebuilt. */
export const RECIPE_VERSION = "1";
/** Where the build's CA bundle sits during the build (removed from the final image). */
export const BUILD_CA = "/etc/drydock/build-ca.crt";
/** Directories setup may write outside the repository; the final image keeps them. */
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
}

export interface EnvironmentPlan {
  /** 12 hex digits of the cache key. */
  hash: string;
  tag: string;
  /** What the cache key is made of, in words, for `drydock env show`. */
  keyedBy: string[];
}

export function planEnvironment(inputs: PlanInputs): EnvironmentPlan {
  const { definition } = inputs;
  const hash = createHash("sha256");
  const part = (label: string, value: string) => hash.update(label).update("\0").update(value).update("\0");
  part("recipe", RECIPE_VERSION);
  part("base", inputs.baseImageId);
  part("definition", `${definition.file ?? ""}\n${inputs.definitionText}`);
  if (inputs.dockerfileText !== undefined) part("dockerfile", inputs.dockerfileText);
  const keyFiles = [...inputs.keyFiles].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const f of keyFiles) part(`key:${f.path}`, f.sha256);
  const digest = hash.digest("hex").slice(0, 12);
  const keyedBy = [
    `the base image ${inputs.baseImageId.replace(/^sha256:/, "").slice(0, 12)}`,
    ...(definition.file ? [definition.file] : []),
    ...(definition.base.kind === "dockerfile" ? [definition.base.dockerfile] : []),
    ...keyFiles.map((f) => f.path),
  ];
  return { hash: digest, tag: `${ENV_IMAGE_REPO}:${digest}`, keyedBy };
}

/** One Dockerfile instruction per line; JSON exec form keeps commands exactly as written. */
const json = (value: unknown) => JSON.stringify(value);

/** The step labels of the Dockerfile, by instruction number (1-based), for progress and errors. */
export interface BuildFile {
  dockerfile: string;
  /** `labels[n]` names instruction n when it runs a setup step (else undefined). */
  steps: Array<SetupStep | undefined>;
}

export function environmentDockerfile(
  definition: EnvironmentDefinition,
  baseImage: string,
  labels: Record<string, string>,
): BuildFile {
  const lines: string[] = [];
  const steps: Array<SetupStep | undefined> = [undefined];
  const add = (line: string, step?: SetupStep) => {
    lines.push(line);
    steps.push(step);
  };
  add(`FROM ${baseImage} AS tools`);
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

  add("FROM tools AS setup");
  add("COPY --chown=1000:1000 repo/ /workspace/");
  add("COPY prepare.sh /opt/drydock/env-prepare.sh");
  add("USER 1000");
  add("WORKDIR /workspace");
  // A git repository of exactly what was copied, so setup tools that ask git (setuptools-scm)
  // get an answer and the prepare step can tell what setup made from what was there.
  add(
    `RUN ${json([
      "sh",
      "-c",
      "git init -q && git add -A && git -c user.name=drydock -c user.email=drydock@localhost commit -q --no-verify --allow-empty -m 'environment build'",
    ])}`,
  );
  for (const step of definition.setup) {
    add(`RUN ${json(["env", ...CA_ENV, "bash", "-e", "-o", "pipefail", "-c", step.command])}`, step);
  }
  add(`RUN ${json(["bash", "/opt/drydock/env-prepare.sh"])}`);

  add("FROM tools");
  add(`RUN ${json(["rm", "-f", BUILD_CA])}`);
  for (const dir of KEPT_DIRS) add(`COPY --from=setup --chown=1000:1000 ${dir} ${dir}`);
  add("COPY --from=setup /opt/drydock/env /opt/drydock/env");
  const labelText = Object.entries(labels)
    .map(([k, v]) => `${json(k)}=${json(v)}`)
    .join(" ");
  if (labelText) add(`LABEL ${labelText}`);
  add("USER 1000");
  add("WORKDIR /workspace");
  return { dockerfile: `${lines.join("\n")}\n`, steps };
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
